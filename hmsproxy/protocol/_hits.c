/* serve_hits: one client's shortcut hits served call after call without the interpreter.
 *
 * downstream/hits.py calls it in place of reading the client's next call; it returns to Python
 * only for what a hit cannot do. Per call it reads the client's message whole, finds the
 * remembered decision as fastpath.FastPath.shortcut would (pipeline/shortcuts.py: the key is the
 * method, the arguments' bytes and the caller; the decision must name the handler's current router
 * and not have expired), registers the backend call with the circuit breaker as Breaker.enter does
 * (one InFlight per session, put into and taken out of the breaker's dict), makes the round trip
 * (round_trip, the C exchange), counts the answer as Backends.relayed does, appends what the
 * on_complete hooks need to `records`, and sends the answer to the client.
 *
 * serve_hits(client_fd, session, caller, shortcuts, known, handler, eligible, conns, breaker, calls,
 *            tripped, states, capped, inflight, token, records, relayed, limit, max_key, batch, idle_ms)
 *   -> (status, data, shortcut, exchanged)
 *
 * client_fd: the client's blocking socket; session: its Session, caller: Session.caller;
 * shortcuts: the Shortcuts (`.used` counted here), known: their dict;
 * handler: read for `.router` on every call; eligible: method -> MethodSpec, the methods a hit may
 * serve here (hits.py); conns: Session's kept connections (a connection's `hit_fd` is its plain
 * socket's, or -1); breaker: read for `._running`; calls / tripped: its dicts; states: Backends'
 * states (`.up`, `.relayed`); capped: metastores with a concurrency cap (never served here);
 * inflight / token: this session's breaker entry; records: list appended (spec, session, shortcut,
 * seconds, message type, body or None when the answer is the success value: answered_hits.py); relayed: Backends.relayed, for a
 * metastore not known to be up; limit: exchange's; max_key: MAX_KEY_BYTES; batch: records that make
 * it return; idle_ms: how long it waits for the client's next call while records it appended wait
 * (a client that goes quiet gets its hits completed; an idle one never wakes for others').
 *
 * Statuses: FLUSH (records to complete, nothing read), MISS (data: the bytes read, a call for the
 * full path, or the start of one), FAILED (data: the call; its round trip failed or was cut short:
 * `exchanged` is round_trip's result, or the ValueError it raised, for wire.ThriftConnection.relay
 * to finish as its own exchange would; `shortcut` the decision it used), GONE (the client closed its
 * connection or a read or write failed: data is the errno, 0 for a close).
 *
 * The GIL is released while it waits for the client, the metastore, or writes.
 */
#include "_thriftwalk.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

enum { H_FLUSH = 0, H_MISS = 1, H_FAILED = 2, H_GONE = 3 };
#define CLIENT_READ 65536

static double monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* time.monotonic()'s clock: the breaker's and shortcuts.py's */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static PyObject *answer(int status, PyObject *data, PyObject *shortcut, PyObject *exchanged) {
    if (data == NULL) return NULL;
    return Py_BuildValue("(iNOO)", status, data, shortcut ? shortcut : Py_None, exchanged ? exchanged : Py_None);
}

/* Waits for the client's next call, no longer than idle_ms when records wait: 1 readable, 0 not
 * within that, -1 with errno. */
static int client_ready(int fd, int idle_ms) {
    struct pollfd pfd = {fd, POLLIN, 0};
    int r, err;
    Py_BEGIN_ALLOW_THREADS
    r = poll(&pfd, 1, idle_ms);
    err = errno;
    Py_END_ALLOW_THREADS
    errno = err;
    return r;
}

/* The attributes read and written on every hit, interned once (a name made per look-up costs more
 * than the look-up). */
static struct {
    PyObject *router, *expires, *hit, *hit_fd, *running, *metastore, *conn, *cut, *started, *up, *relayed, *used;
} attr;

static int intern_names(void) {
    if (attr.router != NULL) return 0;
    const char *spelled[] = {"router", "expires", "hit", "hit_fd", "_running", "metastore", "conn", "cut", "started", "up",
                             "relayed", "used"};
    PyObject **slot = (PyObject **)&attr;
    for (size_t i = 0; i < sizeof(spelled) / sizeof(spelled[0]); i++) {
        slot[i] = PyUnicode_InternFromString(spelled[i]);
        if (slot[i] == NULL) return -1;
    }
    return 0;
}

/* The attribute `attribute` of `obj` is `value` (a new or borrowed reference: the attribute takes its own). */
static int set(PyObject *obj, PyObject *attribute, PyObject *value) {
    return value == NULL ? -1 : PyObject_SetAttr(obj, attribute, value);
}

/* Whether the decision `sc` still holds for a call at `now` under `handler`'s router: its hit plan
 * (a new reference) or NULL (a miss; no exception set unless one happened). */
static PyObject *current_plan(PyObject *sc, PyObject *handler, double now) {
    PyObject *router = PyObject_GetAttr(handler, attr.router);
    PyObject *made_on = PyObject_GetAttr(sc, attr.router);
    PyObject *expires = PyObject_GetAttr(sc, attr.expires);
    PyObject *plan = NULL;
    if (router != NULL && made_on != NULL && expires != NULL && router == made_on) {
        double until = PyFloat_AsDouble(expires);
        if (!(until == -1.0 && PyErr_Occurred()) && until >= now) {
            plan = PyObject_GetAttr(sc, attr.hit);
            if (plan == Py_None || (plan != NULL && !PyTuple_Check(plan))) Py_CLEAR(plan);
        }
    }
    Py_XDECREF(router);
    Py_XDECREF(made_on);
    Py_XDECREF(expires);
    return plan;
}

/* Breaker.enter for a hit over `conn`: 1 registered, 0 not (tripped, or the watchdog must be
 * started: the full path does both), -1 on error. */
static int enter(PyObject *breaker, PyObject *calls, PyObject *tripped, PyObject *inflight, PyObject *token,
                 PyObject *metastore, PyObject *conn, double now) {
    int is_tripped = PyDict_Contains(tripped, metastore);
    if (is_tripped != 0) return is_tripped < 0 ? -1 : 0;
    if (set(inflight, attr.metastore, metastore) < 0 || set(inflight, attr.conn, conn) < 0 || set(inflight, attr.cut, Py_False) < 0)
        return -1;
    PyObject *started = PyFloat_FromDouble(now);
    int r = set(inflight, attr.started, started);
    Py_XDECREF(started);
    if (r < 0 || PyDict_SetItem(calls, token, inflight) < 0) return -1;
    PyObject *running = PyObject_GetAttr(breaker, attr.running);
    int watching = running == NULL ? -1 : PyObject_IsTrue(running);
    Py_XDECREF(running);
    if (watching == 1) { /* read after the call is registered, as Breaker.enter does */
        is_tripped = PyDict_Contains(tripped, metastore); /* read after conn is set: see Breaker.uses */
        if (is_tripped == 0) return 1;
    }
    if (PyDict_DelItem(calls, token) < 0) PyErr_Clear();
    return (watching < 0 || is_tripped < 0) ? -1 : 0;
}

/* Breaker.leave: 1 when a trip cut the call (its connection is closed by its owner: us), 0 not, -1 on error. */
static int leave(PyObject *calls, PyObject *token, PyObject *inflight) {
    if (PyDict_DelItem(calls, token) < 0) PyErr_Clear(); /* a trip may have taken it out already */
    PyObject *cut = PyObject_GetAttr(inflight, attr.cut);
    int was_cut = cut == NULL ? -1 : PyObject_IsTrue(cut);
    Py_XDECREF(cut);
    return was_cut;
}

/* Backends.relayed(metastore) without a Python frame while the metastore is known to be up. */
static int count_relayed(PyObject *states, PyObject *metastore, PyObject *relayed) {
    PyObject *st = PyDict_GetItemWithError(states, metastore);
    if (st == NULL && PyErr_Occurred()) return -1;
    if (st != NULL) {
        PyObject *up = PyObject_GetAttr(st, attr.up);
        int known_up = up == Py_True;
        Py_XDECREF(up);
        if (up == NULL) return -1;
        if (known_up) {
            PyObject *count = PyObject_GetAttr(st, attr.relayed);
            PyObject *one = PyLong_FromLong(1);
            PyObject *more = (count == NULL || one == NULL) ? NULL : PyNumber_Add(count, one);
            Py_XDECREF(one);
            int r = more == NULL ? -1 : PyObject_SetAttr(st, attr.relayed, more);
            Py_XDECREF(count);
            Py_XDECREF(more);
            return r;
        }
    }
    PyObject *r = PyObject_CallOneArg(relayed, metastore);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* shortcuts.used += 1, as Shortcuts.find counts. */
static int count_used(PyObject *shortcuts) {
    PyObject *used = PyObject_GetAttr(shortcuts, attr.used);
    PyObject *one = PyLong_FromLong(1);
    PyObject *more = (used == NULL || one == NULL) ? NULL : PyNumber_Add(used, one);
    int r = more == NULL ? -1 : PyObject_SetAttr(shortcuts, attr.used, more);
    Py_XDECREF(used);
    Py_XDECREF(one);
    Py_XDECREF(more);
    return r;
}

/* What on_complete records of an answer: None when it is the success value (or a void
 * call's empty struct), else the body's bytes (relay.outcome reads the exception from them). */
static PyObject *outcome_body(PyObject *reply, int mtype, Py_ssize_t header_len) {
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(reply);
    Py_ssize_t n = PyBytes_GET_SIZE(reply);
    if (mtype == REPLY && n - header_len >= 1 && b[header_len] == T_STOP) Py_RETURN_NONE;
    if (mtype == REPLY && n - header_len >= 3 && b[header_len + 1] == 0 && b[header_len + 2] == 0) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)b + header_len, n - header_len);
}

PyObject *serve_hits(PyObject *self, PyObject *args) {
    int client, idle_ms;
    PyObject *session, *caller, *shortcuts, *known, *handler, *eligible, *conns, *breaker, *calls, *tripped, *states, *capped, *inflight, *token,
        *records, *relayed;
    Py_ssize_t limit, max_key, batch;
    if (!PyArg_ParseTuple(args, "iOOOO!OO!O!OO!O!O!O!OOO!Onnni", &client, &session, &caller, &shortcuts, &PyDict_Type, &known,
                          &handler, &PyDict_Type,
                          &eligible, &PyDict_Type, &conns, &breaker, &PyDict_Type, &calls, &PyDict_Type, &tripped, &PyDict_Type,
                          &states, &PyDict_Type, &capped, &inflight, &token, &PyList_Type, &records, &relayed, &limit,
                          &max_key, &batch, &idle_ms))
        return NULL;
    if (intern_names() < 0) return NULL;
    unsigned char *buf = PyMem_Malloc(CLIENT_READ);
    if (buf == NULL) return PyErr_NoMemory();
    PyObject *result = NULL;
    Py_ssize_t mine = 0; /* records this call appended: only they make it wait at most idle_ms (the list is every client's) */
    for (;;) {
        Py_ssize_t n = 0, name_at, name_len, header_len = -1, end = TRUNCATED;
        int mtype = 0, err;
        if (mine > 0 && PyList_GET_SIZE(records) > 0) {
            int ready = client_ready(client, idle_ms);
            if (ready == 0) {
                result = answer(H_FLUSH, Py_NewRef(Py_None), NULL, NULL);
                goto done;
            }
            if (ready < 0 && errno != EINTR) {
                result = answer(H_GONE, PyLong_FromLong(errno), NULL, NULL);
                goto done;
            }
        }
        while (end < 0) { /* the client's call, whole; anything else goes to the full path as read */
            ssize_t got;
            Py_BEGIN_ALLOW_THREADS
            got = recv(client, buf + n, (size_t)(CLIENT_READ - n), 0);
            err = errno;
            Py_END_ALLOW_THREADS
            if (got < 0 && err == EINTR) continue;
            if (got <= 0) {
                result = n == 0 ? answer(H_GONE, PyLong_FromLong(got == 0 ? 0 : err), NULL, NULL)
                                : answer(H_MISS, PyBytes_FromStringAndSize((const char *)buf, n), NULL, NULL);
                goto done;
            }
            n += got;
            int found = parse_header(buf, n, &name_at, &name_len, &mtype, &header_len);
            if (found < 0) PyErr_Clear(); /* the full path's reader says what is wrong */
            if (found == 1) end = skip(buf, n, header_len, T_STRUCT, 0);
            int whole_or_hopeless = found < 0 || end != TRUNCATED || (found == 1 && (mtype != CALL || n - header_len > max_key));
            if (whole_or_hopeless || n == CLIENT_READ) {
                if (end >= 0 && end == n && mtype == CALL && n - header_len <= max_key) break;
                result = answer(H_MISS, PyBytes_FromStringAndSize((const char *)buf, n), NULL, NULL);
                goto done;
            }
        }
        double started = monotonic();
        PyObject *message = NULL, *key = NULL, *sc = NULL, *plan = NULL, *conn = NULL, *exchanged = NULL, *record = NULL;
        int status = H_MISS, served = 0;
        PyObject *name = PyUnicode_DecodeUTF8((const char *)buf + name_at, name_len, "strict");
        if (name == NULL) PyErr_Clear(); /* not UTF-8: the full path's reader says so */
        PyObject *spec = name == NULL ? NULL : PyDict_GetItemWithError(eligible, name);
        if (spec == NULL) goto missed;
        message = PyBytes_FromStringAndSize((const char *)buf, n);
        PyObject *arguments = PyBytes_FromStringAndSize((const char *)buf + header_len, n - header_len);
        key = arguments == NULL ? NULL : PyTuple_Pack(3, name, arguments, caller);
        Py_XDECREF(arguments);
        sc = key == NULL ? NULL : Py_XNewRef(PyDict_GetItemWithError(known, key));
        plan = sc == NULL ? NULL : current_plan(sc, handler, started);
        PyObject *metastore, *conn_key, *field;
        int kind, fid;
        if (plan == NULL || message == NULL || !PyArg_ParseTuple(plan, "OOiSi", &metastore, &conn_key, &kind, &field, &fid)) goto missed;
        if (PyDict_Contains(capped, metastore) != 0) goto missed;
        conn = Py_XNewRef(PyDict_GetItemWithError(conns, conn_key));
        PyObject *fd_attr = conn == NULL ? NULL : PyObject_GetAttr(conn, attr.hit_fd);
        if (conn != NULL && fd_attr == NULL) PyErr_Clear(); /* not a ThriftConnection (tests' fakes): never a hit here */
        long fd = fd_attr == NULL ? -1 : PyLong_AsLong(fd_attr);
        Py_XDECREF(fd_attr);
        if (fd < 0) goto missed;
        int entered = enter(breaker, calls, tripped, inflight, token, metastore, conn, started);
        if (entered != 1) goto missed;
        exchanged = round_trip((int)fd, (const char *)buf, n, limit, kind, PyBytes_AS_STRING(field), PyBytes_GET_SIZE(field), fid);
        if (exchanged == NULL) { /* bytes that are not Thrift: relay() says so as its own exchange would */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            exchanged = value;
        }
        int was_cut = leave(calls, token, inflight);
        if (was_cut < 0 || exchanged == NULL) goto missed;
        if (!PyTuple_Check(exchanged) || PyLong_AsLong(PyTuple_GET_ITEM(exchanged, 0)) != X_DONE) {
            status = H_FAILED;
            goto missed;
        }
        if (was_cut) { /* cut as its answer came: the answer goes, the connection does not stay */
            PyObject *closed = PyObject_CallMethod(conn, "close", NULL);
            Py_XDECREF(closed);
            if (closed == NULL) goto missed;
        }
        PyObject *reply = PyTuple_GET_ITEM(exchanged, 3);
        int reply_type = (int)PyLong_AsLong(PyTuple_GET_ITEM(exchanged, 1));
        Py_ssize_t reply_header = PyLong_AsSsize_t(PyTuple_GET_ITEM(exchanged, 2));
        if (count_relayed(states, metastore, relayed) < 0) goto missed;
        PyObject *body = outcome_body(reply, reply_type, reply_header);
        record = body == NULL ? NULL : Py_BuildValue("(OOOdiN)", spec, session, sc, monotonic() - started, reply_type, body);
        if (record == NULL || PyList_Append(records, record) < 0 || count_used(shortcuts) < 0) goto missed;
        served = 1;
        mine++;
        err = send_all(client, PyBytes_AS_STRING(reply), PyBytes_GET_SIZE(reply));
        if (err != 0) result = answer(H_GONE, PyLong_FromLong(err), NULL, NULL);
        else if (PyList_GET_SIZE(records) >= batch) result = answer(H_FLUSH, Py_NewRef(Py_None), NULL, NULL);
    missed:
        if (!served && !PyErr_Occurred()) {
            if (message == NULL) message = PyBytes_FromStringAndSize((const char *)buf, n);
            PyObject *data = message == NULL ? NULL : Py_NewRef(message);
            result = status == H_FAILED ? answer(status, data, sc, exchanged) : answer(H_MISS, data, NULL, NULL);
        }
        int failed = PyErr_Occurred() != NULL;
        Py_XDECREF(name);
        Py_XDECREF(message);
        Py_XDECREF(key);
        Py_XDECREF(sc);
        Py_XDECREF(plan);
        Py_XDECREF(conn);
        Py_XDECREF(exchanged);
        Py_XDECREF(record);
        if (failed) {
            Py_CLEAR(result);
            goto done;
        }
        if (result != NULL) goto done;
    }
done:
    PyMem_Free(buf);
    return result;
}

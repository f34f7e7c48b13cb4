/* HitLoop.serve: one client's shortcut hits served call after call without the interpreter.
 *
 * downstream/hits.py calls it in place of reading the client's next call; it returns to Python
 * only for what a hit cannot do. Per call it reads the client's message whole, finds the
 * remembered decision as fastpath.FastPath.shortcut would (pipeline/shortcuts.py: the key is the
 * method, the arguments' bytes and the caller; the decision must name the router it is given and
 * not have expired), is admitted by the Gate as the Python path is (_gate.c: gate_enter, then
 * gate_leave; a capped metastore or a sleeping watchdog leave the call to Python), makes the round
 * trip (round_trip, the C exchange), counts the answer (gate_relayed, the Tally of hits), appends
 * what the on_complete hooks need to `records`, and sends the answer to the client.
 *
 * HitLoop(known, gate, used, close, records, limit, max_key, batch, idle_ms), once per handler:
 * known: Shortcuts.known; gate: Backends.gate; used: Shortcuts' Tally; close: closes a connection
 * a trip cut as its answer came; records: list appended (spec, session, shortcut, seconds, message
 * type, body or None when the answer is the success value: answered_hits.py); limit: exchange's;
 * max_key: MAX_KEY_BYTES; batch: records that make it return; idle_ms: how long it waits for the
 * client's next call after it served a hit (a client that goes quiet gets its hits completed and
 * the server's idle check, downstream/idle_upstream.py; an idle one never wakes for others').
 *
 * serve(client_fd, session, caller, router, eligible, conns) -> (status, data, shortcut, exchanged)
 * client_fd: the client's blocking socket; session: its Session, caller: Session.caller; router:
 * the handler's (a reload drops every shortcut: Handler.apply_config); eligible: method ->
 * MethodSpec, the methods a hit may serve here; conns: Session's kept connections (a HitSocket's
 * fd, or -1: never a hit). A Shortcut and the Plan it holds (pipeline/plan.py: the same object the
 * Python path executes) are read by position (SHORTCUT_*, PLAN_HIT in _thriftwalk.h, checked against
 * the NamedTuples by tests/contract/test_c_boundary.py).
 *
 * Statuses (H_* in _thriftwalk.h, exported to Python): FLUSH (records to complete, nothing read),
 * MISS (data: the bytes read, a call for the full path, or the start of one), FAILED (data: the
 * call; its round trip failed or was cut short: `exchanged` is round_trip's result, or the
 * ValueError it raised, for wire.ThriftConnection.relay to finish as its own exchange would;
 * `shortcut` the decision it used), GONE (the client closed its connection or a read or write
 * failed: data is the errno, 0 for a close).
 *
 * The GIL is released while it waits for the client, the metastore, or writes.
 */
#include "_thriftwalk.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

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

/* Waits for the client's next call, no longer than idle_ms after a hit: 1 readable, 0 not
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

/* Whether the decision `sc` (a Shortcut) still holds for a call at `now` under `router`: the hit
 * part of its Plan (borrowed), or NULL (a miss). */
static PyObject *current_hit(PyObject *sc, PyObject *router, double now) {
    if (!PyTuple_Check(sc) || PyTuple_GET_SIZE(sc) <= SHORTCUT_EXPIRES) return NULL;
    if (PyTuple_GET_ITEM(sc, SHORTCUT_ROUTER) != router) return NULL;
    PyObject *expires = PyTuple_GET_ITEM(sc, SHORTCUT_EXPIRES);
    if (!PyFloat_CheckExact(expires) || PyFloat_AS_DOUBLE(expires) < now) return NULL;
    PyObject *plan = PyTuple_GET_ITEM(sc, SHORTCUT_PLAN);
    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) <= PLAN_HIT) return NULL;
    PyObject *hit = PyTuple_GET_ITEM(plan, PLAN_HIT);
    return PyTuple_Check(hit) ? hit : NULL;
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

/* What one handler's loop keeps across clients (downstream/hits.py makes one). */
typedef struct {
    PyObject_HEAD
    PyObject *known;   /* Shortcuts.known: key -> Shortcut */
    Gate *gate;        /* admission (Backends.gate) */
    Tally *used;       /* Shortcuts' hits */
    PyObject *close;   /* closes a connection a trip cut as its answer came */
    PyObject *records; /* AnsweredHits.pending */
    Py_ssize_t limit, max_key, batch;
    int idle_ms;
} HitLoop;

static PyObject *serve(HitLoop *loop, PyObject *args) {
    int client;
    PyObject *session, *caller, *router, *eligible, *conns;
    if (!PyArg_ParseTuple(args, "iOOOO!O!", &client, &session, &caller, &router, &PyDict_Type, &eligible, &PyDict_Type, &conns))
        return NULL;
    PyObject *known = loop->known, *records = loop->records;
    Py_ssize_t limit = loop->limit, max_key = loop->max_key, batch = loop->batch;
    int idle_ms = loop->idle_ms;
    unsigned char *buf = PyMem_Malloc(CLIENT_READ);
    if (buf == NULL) return PyErr_NoMemory();
    PyObject *result = NULL;
    Py_ssize_t mine = 0; /* records this call appended: only they make it wait at most idle_ms (the list is every client's) */
    for (;;) {
        Py_ssize_t n = 0, name_at, name_len, header_len = -1, end = TRUNCATED;
        int mtype = 0, err;
        if (mine > 0) { /* even when another client's flush emptied `records`: the server's idle check runs on FLUSH */
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
        PyObject *message = NULL, *key = NULL, *sc = NULL, *hit = NULL, *conn = NULL, *exchanged = NULL, *record = NULL;
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
        hit = sc == NULL ? NULL : Py_XNewRef(current_hit(sc, router, started));
        PyObject *metastore, *conn_key, *field;
        int kind, fid;
        if (hit == NULL || message == NULL || !PyArg_ParseTuple(hit, "OOiSi", &metastore, &conn_key, &kind, &field, &fid)) goto missed;
        conn = Py_XNewRef(PyDict_GetItemWithError(conns, conn_key));
        /* not a ThriftConnection (tests' fakes), or one a hit may not use: never a hit here */
        int fd = conn != NULL && PyObject_TypeCheck(conn, &HitSocketType) ? ((HitSocket *)conn)->fd : -1;
        if (fd < 0) goto missed;
        long long token = gate_enter(loop->gate, metastore, conn, started, 1);
        if (token < 0) goto missed;
        exchanged = round_trip(fd, (const char *)buf, n, limit, kind, PyBytes_AS_STRING(field), PyBytes_GET_SIZE(field), fid);
        if (exchanged == NULL) { /* bytes that are not Thrift: relay() says so as its own exchange would */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            exchanged = value;
        }
        PyObject *call = gate_leave(loop->gate, token);
        int was_cut = call == NULL ? -1 : call != Py_None && ((InFlight *)call)->cut;
        Py_XDECREF(call);
        if (was_cut < 0 || exchanged == NULL) goto missed;
        if (!PyTuple_Check(exchanged) || PyLong_AsLong(PyTuple_GET_ITEM(exchanged, 0)) != X_DONE) {
            status = H_FAILED;
            goto missed;
        }
        if (was_cut) { /* cut as its answer came: the answer goes, the connection does not stay */
            PyObject *closed = PyObject_CallOneArg(loop->close, conn);
            Py_XDECREF(closed);
            if (closed == NULL) goto missed;
        }
        PyObject *reply = PyTuple_GET_ITEM(exchanged, 3);
        int reply_type = (int)PyLong_AsLong(PyTuple_GET_ITEM(exchanged, 1));
        Py_ssize_t reply_header = PyLong_AsSsize_t(PyTuple_GET_ITEM(exchanged, 2));
        if (gate_relayed(loop->gate, metastore) < 0) goto missed;
        PyObject *body = outcome_body(reply, reply_type, reply_header);
        record = body == NULL ? NULL : Py_BuildValue("(OOOdiN)", spec, session, sc, monotonic() - started, reply_type, body);
        if (record == NULL || PyList_Append(records, record) < 0) goto missed;
        loop->used->count++;
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
        Py_XDECREF(hit);
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

static int hitloop_init(HitLoop *self, PyObject *args, PyObject *kwds) {
    PyObject *known, *gate, *used, *close, *records;
    Py_ssize_t limit, max_key, batch;
    int idle_ms;
    static char *keywords[] = {"known", "gate", "used", "close", "records", "limit", "max_key", "batch", "idle_ms", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!OO!nnni", keywords, &PyDict_Type, &known, &GateType, &gate, &TallyType,
                                     &used, &close, &PyList_Type, &records, &limit, &max_key, &batch, &idle_ms))
        return -1;
    if (limit <= 0 || max_key < 0 || batch <= 0 || idle_ms < 0) {
        PyErr_SetString(PyExc_ValueError, "HitLoop: limit and batch must be positive, max_key and idle_ms not negative");
        return -1;
    }
    Py_XSETREF(self->known, Py_NewRef(known));
    Py_XSETREF(self->gate, (Gate *)Py_NewRef(gate));
    Py_XSETREF(self->used, (Tally *)Py_NewRef(used));
    Py_XSETREF(self->close, Py_NewRef(close));
    Py_XSETREF(self->records, Py_NewRef(records));
    self->limit = limit;
    self->max_key = max_key;
    self->batch = batch;
    self->idle_ms = idle_ms;
    return 0;
}

static int hitloop_traverse(HitLoop *self, visitproc visit, void *arg) {
    Py_VISIT(self->known);
    Py_VISIT(self->gate);
    Py_VISIT(self->used);
    Py_VISIT(self->close);
    Py_VISIT(self->records);
    return 0;
}

static int hitloop_clear(HitLoop *self) {
    Py_CLEAR(self->known);
    Py_CLEAR(self->gate);
    Py_CLEAR(self->used);
    Py_CLEAR(self->close);
    Py_CLEAR(self->records);
    return 0;
}

static void hitloop_dealloc(HitLoop *self) {
    PyObject_GC_UnTrack(self);
    hitloop_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef hitloop_methods[] = {
    {"serve", (PyCFunction)serve, METH_VARARGS,
     "serve(client_fd, session, caller, router, eligible, conns) -> (status, data, shortcut, exchanged); see _hits.c"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject HitLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmsproxy.protocol._thriftwalk.HitLoop",
    .tp_doc = "HitLoop(known, gate, used, close, records, limit, max_key, batch, idle_ms): shortcut hits served in C",
    .tp_basicsize = sizeof(HitLoop),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)hitloop_init,
    .tp_traverse = (traverseproc)hitloop_traverse,
    .tp_clear = (inquiry)hitloop_clear,
    .tp_dealloc = (destructor)hitloop_dealloc,
    .tp_methods = hitloop_methods,
};

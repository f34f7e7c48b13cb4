/* Admission to a metastore, one implementation for the Python path and the C hit loop (_hits.c).
 *
 * A Gate (one per upstream.backends.Backends) holds what deciding "may this call go now?" needs:
 * the calls in flight (token -> InFlight, which the breaker's watchdog reads and cuts), the tripped
 * metastores (the breaker writes them), whether the watchdog runs, the metastores with a concurrency
 * cap (slots.py: the hit loop leaves those to Python, which queues for a slot), those known to answer
 * and how many answers were relayed per metastore. breaker.Breaker.enter/leave and
 * backends.Backends.relayed call gate_enter/gate_leave/gate_relayed through the methods below; the
 * hit loop calls the same functions directly. Python reads these objects' state through the member
 * names declared here; nothing here reads a Python attribute by name.
 *
 * A Tally counts (pipeline/shortcuts.py's hits); a HitSocket is the base of wire.ThriftConnection:
 * the file descriptor a hit may use from C, or -1.
 */
#include "_thriftwalk.h"

#include <structmember.h>

/* -- InFlight: one backend call now in flight ---------------------------------------------- */

static int inflight_init(InFlight *self, PyObject *args, PyObject *kwds) {
    PyObject *metastore;
    double started;
    static char *keywords[] = {"metastore", "started", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Od", keywords, &metastore, &started)) return -1;
    Py_XSETREF(self->metastore, Py_NewRef(metastore));
    Py_XSETREF(self->conn, Py_NewRef(Py_None));
    self->started = started;
    self->cut = 0;
    return 0;
}

static int inflight_traverse(InFlight *self, visitproc visit, void *arg) {
    Py_VISIT(self->metastore);
    Py_VISIT(self->conn);
    return 0;
}

static int inflight_clear(InFlight *self) {
    Py_CLEAR(self->metastore);
    Py_CLEAR(self->conn);
    return 0;
}

static void inflight_dealloc(InFlight *self) {
    PyObject_GC_UnTrack(self);
    inflight_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef inflight_members[] = {
    {"metastore", T_OBJECT, offsetof(InFlight, metastore), 0, "the metastore it goes to"},
    {"conn", T_OBJECT, offsetof(InFlight, conn), 0, "the connection it uses, or None"},
    {"started", T_DOUBLE, offsetof(InFlight, started), 0, "monotonic time it entered"},
    {"cut", T_BOOL, offsetof(InFlight, cut), 0, "a trip cut it (Breaker._cut_calls)"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject InFlightType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmsproxy.protocol._thriftwalk.InFlight",
    .tp_doc = "InFlight(metastore, started): one backend call now in flight (breaker.py)",
    .tp_basicsize = sizeof(InFlight),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)inflight_init,
    .tp_traverse = (traverseproc)inflight_traverse,
    .tp_clear = (inquiry)inflight_clear,
    .tp_dealloc = (destructor)inflight_dealloc,
    .tp_members = inflight_members,
};

/* -- Gate ------------------------------------------------------------------------------------ */

long long gate_enter(Gate *g, PyObject *metastore, PyObject *conn, double started, int hit) {
    if (hit) { /* the hit loop: a capped metastore queues for a slot and an unwatched call starts the watchdog, in Python */
        int capped = PyDict_Contains(g->capped, metastore);
        if (capped != 0) return capped < 0 ? GATE_ERROR : GATE_REFUSED;
        if (!g->watching) return GATE_REFUSED;
    }
    int tripped = PyDict_Contains(g->tripped, metastore);
    if (tripped != 0) return tripped < 0 ? GATE_ERROR : GATE_REFUSED;
    /* Registered with its connection at once, the GIL held throughout: a trip set before this is
     * seen above, one set after finds the call and its connection (Breaker._cut_calls). */
    InFlight *call = PyObject_GC_New(InFlight, &InFlightType);
    if (call == NULL) return GATE_ERROR;
    call->metastore = Py_NewRef(metastore);
    call->conn = Py_NewRef(conn);
    call->started = started;
    call->cut = 0;
    PyObject_GC_Track(call);
    long long token = g->next_token++;
    PyObject *key = PyLong_FromLongLong(token);
    int r = key == NULL ? -1 : PyDict_SetItem(g->calls, key, (PyObject *)call);
    Py_XDECREF(key);
    Py_DECREF(call);
    return r < 0 ? GATE_ERROR : token;
}

PyObject *gate_leave(Gate *g, long long token) {
    PyObject *key = PyLong_FromLongLong(token);
    if (key == NULL) return NULL;
    PyObject *call = PyDict_GetItemWithError(g->calls, key); /* a trip may have taken it out already */
    if (call == NULL) {
        Py_DECREF(key);
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    Py_INCREF(call);
    int r = PyDict_DelItem(g->calls, key);
    Py_DECREF(key);
    if (r < 0) Py_CLEAR(call);
    return call;
}

int gate_relayed(Gate *g, PyObject *metastore) {
    int up = PySet_Contains(g->up, metastore);
    if (up < 0) return -1;
    if (!up) { /* its first answer, or its first since it was down: Backends marks it up (and adds it to `up`) */
        PyObject *r = PyObject_CallOneArg(g->on_answer, metastore);
        if (r == NULL) return -1;
        Py_DECREF(r);
    }
    PyObject *count = PyDict_GetItemWithError(g->relayed, metastore);
    if (count == NULL && PyErr_Occurred()) return -1;
    long long n = count == NULL ? 0 : PyLong_AsLongLong(count);
    if (n == -1 && PyErr_Occurred()) return -1;
    PyObject *more = PyLong_FromLongLong(n + 1);
    int r = more == NULL ? -1 : PyDict_SetItem(g->relayed, metastore, more);
    Py_XDECREF(more);
    return r;
}

static int gate_init(Gate *self, PyObject *args, PyObject *kwds) {
    PyObject *on_answer;
    static char *keywords[] = {"on_answer", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O", keywords, &on_answer)) return -1;
    if (!PyCallable_Check(on_answer)) {
        PyErr_SetString(PyExc_TypeError, "Gate(on_answer): on_answer must be callable");
        return -1;
    }
    Py_XSETREF(self->on_answer, Py_NewRef(on_answer));
    Py_XSETREF(self->calls, PyDict_New());
    Py_XSETREF(self->tripped, PyDict_New());
    Py_XSETREF(self->capped, PyDict_New());
    Py_XSETREF(self->up, PySet_New(NULL));
    Py_XSETREF(self->relayed, PyDict_New());
    if (!self->calls || !self->tripped || !self->capped || !self->up || !self->relayed) return -1;
    return 0;
}

static int gate_traverse(Gate *self, visitproc visit, void *arg) {
    Py_VISIT(self->calls);
    Py_VISIT(self->tripped);
    Py_VISIT(self->capped);
    Py_VISIT(self->up);
    Py_VISIT(self->relayed);
    Py_VISIT(self->on_answer);
    return 0;
}

static int gate_clear(Gate *self) {
    Py_CLEAR(self->calls);
    Py_CLEAR(self->tripped);
    Py_CLEAR(self->capped);
    Py_CLEAR(self->up);
    Py_CLEAR(self->relayed);
    Py_CLEAR(self->on_answer);
    return 0;
}

static void gate_dealloc(Gate *self) {
    PyObject_GC_UnTrack(self);
    gate_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* enter(metastore, conn, started) -> its token, or the metastore's Trip when it is tripped. */
static PyObject *gate_enter_py(Gate *self, PyObject *args) {
    PyObject *metastore, *conn;
    double started;
    if (!PyArg_ParseTuple(args, "OOd", &metastore, &conn, &started)) return NULL;
    long long token = gate_enter(self, metastore, conn, started, 0);
    if (token == GATE_ERROR) return NULL;
    if (token == GATE_REFUSED) {
        PyObject *trip = PyDict_GetItemWithError(self->tripped, metastore);
        return trip != NULL ? Py_NewRef(trip) : PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    return PyLong_FromLongLong(token);
}

static PyObject *gate_leave_py(Gate *self, PyObject *arg) {
    long long token = PyLong_AsLongLong(arg);
    if (token == -1 && PyErr_Occurred()) return NULL;
    return gate_leave(self, token);
}

static PyObject *gate_relayed_py(Gate *self, PyObject *metastore) {
    if (gate_relayed(self, metastore) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef gate_methods[] = {
    {"enter", (PyCFunction)gate_enter_py, METH_VARARGS,
     "enter(metastore, conn, started) -> token, or the metastore's Trip (it is tripped): registers a call"},
    {"leave", (PyCFunction)gate_leave_py, METH_O, "leave(token) -> the call's InFlight, or None when a trip took it out"},
    {"relayed", (PyCFunction)gate_relayed_py, METH_O,
     "relayed(metastore): it answered a relayed call (on_answer(metastore) first unless it is known up)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef gate_members[] = {
    {"calls", T_OBJECT, offsetof(Gate, calls), READONLY, "token -> InFlight: every backend call now in flight"},
    {"tripped", T_OBJECT, offsetof(Gate, tripped), READONLY, "metastore -> Trip: their calls are refused"},
    {"capped", T_OBJECT, offsetof(Gate, capped), 0, "metastore -> its slots (slots.py), replaced whole"},
    {"up", T_OBJECT, offsetof(Gate, up), READONLY, "metastores known to answer"},
    {"relayed_counts", T_OBJECT, offsetof(Gate, relayed), READONLY, "metastore -> answers relayed"},
    {"watching", T_BOOL, offsetof(Gate, watching), 0, "whether the breaker's watchdog runs"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject GateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmsproxy.protocol._thriftwalk.Gate",
    .tp_doc = "Gate(on_answer): admission to the metastores, for the Python path and the C hit loop",
    .tp_basicsize = sizeof(Gate),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)gate_init,
    .tp_traverse = (traverseproc)gate_traverse,
    .tp_clear = (inquiry)gate_clear,
    .tp_dealloc = (destructor)gate_dealloc,
    .tp_methods = gate_methods,
    .tp_members = gate_members,
};

/* -- Tally --------------------------------------------------------------------------------------- */

static PyObject *tally_add_py(Tally *self, PyObject *unused) {
    (void)unused;
    self->count++;
    Py_RETURN_NONE;
}

static PyMethodDef tally_methods[] = {
    {"add", (PyCFunction)tally_add_py, METH_NOARGS, "add(): one more"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tally_members[] = {
    {"count", T_LONGLONG, offsetof(Tally, count), READONLY, "how many so far"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject TallyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmsproxy.protocol._thriftwalk.Tally",
    .tp_doc = "Tally(): a count that Python and the hit loop both add to",
    .tp_basicsize = sizeof(Tally),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_methods = tally_methods,
    .tp_members = tally_members,
};

/* -- HitSocket ----------------------------------------------------------------------------------- */

static PyObject *hitsocket_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    HitSocket *self = (HitSocket *)PyType_GenericNew(type, args, kwds);
    if (self != NULL) self->fd = -1; /* not 0: that is a descriptor too */
    return (PyObject *)self;
}

static PyMemberDef hitsocket_members[] = {
    {"hit_fd", T_INT, offsetof(HitSocket, fd), 0, "the open socket's descriptor when a hit may use it from C, or -1"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject HitSocketType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmsproxy.protocol._thriftwalk.HitSocket",
    .tp_doc = "The base of a connection a shortcut hit may use from C (wire.ThriftConnection)",
    .tp_basicsize = sizeof(HitSocket),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = hitsocket_new,
    .tp_members = hitsocket_members,
};

/* What _thriftwalk.c shares with _hits.c (one extension module, two sources). */
#ifndef HMSPROXY_THRIFTWALK_H
#define HMSPROXY_THRIFTWALK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define TRUNCATED (-1)
#define INVALID (-2)

enum { T_STOP = 0, T_BOOL = 2, T_BYTE = 3, T_DOUBLE = 4, T_I16 = 6, T_I32 = 8, T_I64 = 10,
       T_STRING = 11, T_STRUCT = 12, T_MAP = 13, T_SET = 14, T_LIST = 15 };
/* exchange()'s statuses and fill kinds (framing.py names them for Python). */
enum { X_DONE = 0, X_OVER = 1, X_CLOSED = 2, X_ERRNO = 3 };
enum { FILL_NONE = 0, FILL_STRUCT = 1, FILL_LIST = 2 };
#define CALL 1
#define REPLY 2

/* Offset past the value of type `ttype` at b[pos:n], TRUNCATED or INVALID. */
Py_ssize_t skip(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, int ttype, int depth);
/* The message header in b[0:n]: 1 (name, type, length found), 0 while incomplete, -1 with ValueError set. */
int parse_header(const unsigned char *b, Py_ssize_t n, Py_ssize_t *name_at, Py_ssize_t *name_len, int *mtype,
                 Py_ssize_t *header_len);
/* Sends all of p[0:left] on the blocking socket fd, the GIL released: 0, or the errno. */
int send_all(int fd, const char *p, Py_ssize_t left);
/* A shortcut hit's backend round trip: exchange()'s result tuple, or NULL with an exception set. */
PyObject *round_trip(int fd, const char *request, Py_ssize_t length, Py_ssize_t limit, int kind, const char *field,
                     Py_ssize_t field_len, int fid);

/* _gate.c: admission, one implementation for the Python path and the hit loop. */
typedef struct {
    PyObject_HEAD
    PyObject *metastore, *conn;
    double started;
    char cut;
} InFlight;

typedef struct {
    PyObject_HEAD
    PyObject *calls;     /* token -> InFlight */
    PyObject *tripped;   /* metastore -> Trip */
    PyObject *capped;    /* metastore -> its slots */
    PyObject *up;        /* set of metastores known to answer */
    PyObject *relayed;   /* metastore -> answers relayed */
    PyObject *on_answer; /* called with a metastore not known up that answered */
    long long next_token;
    char watching;
} Gate;

typedef struct {
    PyObject_HEAD
    long long count;
} Tally;

typedef struct {
    PyObject_HEAD
    int fd;
} HitSocket;

extern PyTypeObject InFlightType, GateType, TallyType, HitSocketType, HitLoopType;

#define GATE_REFUSED (-1)
#define GATE_ERROR (-2)
/* Registers a call to `metastore` over `conn`: its token, GATE_REFUSED (tripped; for a `hit`, also
 * capped or unwatched) or GATE_ERROR with an exception set. */
long long gate_enter(Gate *g, PyObject *metastore, PyObject *conn, double started, int hit);
/* Takes call `token` out: its InFlight (new reference), None when a trip took it out, NULL on error. */
PyObject *gate_leave(Gate *g, long long token);
/* `metastore` answered a relayed call: counted (and on_answer called first unless it is known up). */
int gate_relayed(Gate *g, PyObject *metastore);

/* The hit loop's statuses (_hits.c; downstream/hits.py reads them from the module). */
enum { H_FLUSH = 0, H_MISS = 1, H_FAILED = 2, H_GONE = 3 };
/* Where pipeline/shortcuts.Shortcut and the pipeline/plan.Plan it holds (NamedTuples) keep what the
 * hit loop reads. */
enum { SHORTCUT_PLAN = 0, SHORTCUT_ROUTER = 1, SHORTCUT_EXPIRES = 2, PLAN_HIT = 4 };

#endif

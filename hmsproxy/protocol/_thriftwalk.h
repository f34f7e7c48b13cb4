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
/* serve_hits(...), in _hits.c. */
PyObject *serve_hits(PyObject *self, PyObject *args);

#endif

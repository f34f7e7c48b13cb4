/* Where a Thrift binary-protocol value ends, without decoding it (relay.py's typed relay).
 *
 * value_end(buf, pos, ttype) -> the offset just past the value of type `ttype` that starts at
 * `pos` in `buf` (any object with the buffer protocol), or -1 when `buf` ends before the value
 * does (the caller reads more and asks again). Raises ValueError on bytes that cannot be Thrift
 * (an unknown type, a negative size, nesting deeper than MAX_DEPTH).
 *
 * has_field(buf, pos, fid) -> whether the complete struct at `pos` has a top-level field `fid`.
 *
 * message_bounds(buf) -> (name, message type, seqid, header length, end) of the message at the
 * start of `buf`, strict or old-style header; `end` is -1 while its body is incomplete; None while
 * the header is. Every call the proxy reads and every answer it relays asks this once.
 *
 * exchange(fd, request, limit, fill_kind, field, fid) -> (status, mtype or errno, header length, data):
 * a shortcut hit's whole backend exchange (pipeline/shortcuts.py, upstream/wire.py): `request` sent
 * on the blocking socket `fd`, the reply read until its message is complete, and for a reply of up
 * to `limit` bytes the catalog `field` inserted (fill_kind 1: into the success struct; 2: into each
 * struct of the success list; 0: none) unless the struct has field `fid`; the GIL is released while
 * it sends and waits. status DONE: data is the whole reply, filled. OVER: the reply is longer than
 * `limit`, or its success list is not of structs; data is what was read (the caller goes on with
 * relay.copy_body, which streams the rest or says what is wrong). CLOSED: the backend
 * closed the connection; ERRNO: a send or receive failed (errno in the second slot); data is what
 * was read, and the header length is -1 while the header was incomplete (so the caller tells a
 * call that went unanswered from an answer cut short). ValueError on bytes that are not Thrift.
 *
 * serve_hits(...): a client's shortcut hits served call after call without the interpreter (_hits.c).
 *
 * Every read is bounds-checked: a truncated buffer is reported, never read past.
 */
#include "_thriftwalk.h"

#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_DEPTH 64

static int32_t be32(const unsigned char *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]);
}

/* Fixed width of a type, 0 for the variable-length ones, -1 for unknown types. */
static int fixed_width(int ttype) {
    switch (ttype) {
    case T_BOOL: case T_BYTE: return 1;
    case T_I16: return 2;
    case T_I32: return 4;
    case T_DOUBLE: case T_I64: return 8;
    case T_STRING: case T_STRUCT: case T_MAP: case T_SET: case T_LIST: return 0;
    default: return -1;
    }
}

/* Offset past the value at `pos`, TRUNCATED or INVALID. */
Py_ssize_t skip(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, int ttype, int depth) {
    int width = fixed_width(ttype);
    if (width < 0 || depth > MAX_DEPTH) return INVALID;
    if (width > 0) return (n - pos >= width) ? pos + width : TRUNCATED;
    if (ttype == T_STRING) {
        if (n - pos < 4) return TRUNCATED;
        int32_t len = be32(b + pos);
        if (len < 0) return INVALID;
        pos += 4;
        return (n - pos >= len) ? pos + len : TRUNCATED;
    }
    if (ttype == T_STRUCT) {
        for (;;) {
            if (pos >= n) return TRUNCATED;
            int ftype = b[pos];
            if (ftype == T_STOP) return pos + 1;
            if (n - pos < 3) return TRUNCATED;
            pos = skip(b, n, pos + 3, ftype, depth + 1);
            if (pos < 0) return pos;
        }
    }
    int ktype = 0, vtype;
    int32_t count;
    if (ttype == T_MAP) {
        if (n - pos < 6) return TRUNCATED;
        ktype = b[pos];
        vtype = b[pos + 1];
        count = be32(b + pos + 2);
        pos += 6;
    } else {
        if (n - pos < 5) return TRUNCATED;
        vtype = b[pos];
        count = be32(b + pos + 1);
        pos += 5;
    }
    if (count < 0) return INVALID;
    if (count > 0 && (fixed_width(vtype) < 0 || (ttype == T_MAP && fixed_width(ktype) < 0))) return INVALID;
    for (int32_t i = 0; i < count; i++) {
        if (ttype == T_MAP) {
            pos = skip(b, n, pos, ktype, depth + 1);
            if (pos < 0) return pos;
        }
        pos = skip(b, n, pos, vtype, depth + 1);
        if (pos < 0) return pos;
    }
    return pos;
}

static PyObject *value_end(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    int ttype;
    if (!PyArg_ParseTuple(args, "y*ni", &view, &pos, &ttype)) return NULL;
    Py_ssize_t end = (pos < 0 || pos > view.len) ? INVALID : skip((const unsigned char *)view.buf, view.len, pos, ttype, 0);
    PyBuffer_Release(&view);
    if (end == INVALID) {
        PyErr_Format(PyExc_ValueError, "not a Thrift value of type %d at offset %zd", ttype, pos);
        return NULL;
    }
    return PyLong_FromSsize_t(end);
}

/* has_field(buf, pos, fid) -> whether the complete struct at `pos` has a top-level field `fid`. */
static PyObject *has_field(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    int fid;
    if (!PyArg_ParseTuple(args, "y*ni", &view, &pos, &fid)) return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    int found = 0;
    Py_ssize_t at = (pos < 0 || pos > n) ? INVALID : pos;
    while (at >= 0) {
        if (at >= n) { at = TRUNCATED; break; }
        int ftype = b[at];
        if (ftype == T_STOP) break;
        if (n - at < 3) { at = TRUNCATED; break; }
        if ((int16_t)((b[at + 1] << 8) | b[at + 2]) == fid) { found = 1; break; }
        at = skip(b, n, at + 3, ftype, 1);
    }
    PyBuffer_Release(&view);
    if (at < 0) {
        PyErr_Format(PyExc_ValueError, "no complete Thrift struct at offset %zd", pos);
        return NULL;
    }
    return PyBool_FromLong(found);
}

/* The header of the message in b[0:n]: 1 and its name, type and length (the body starts there); 0
 * while incomplete; -1 with a ValueError set on bytes that are no message header. */
int parse_header(const unsigned char *b, Py_ssize_t n, Py_ssize_t *name_at, Py_ssize_t *name_len, int *mtype,
                        Py_ssize_t *header_len) {
    if (n < 8) return 0;
    int32_t first = be32(b);
    if (first < 0) { /* strict: version and type, name length, name, seqid */
        if (((uint32_t)first & 0xFFFF0000u) != 0x80010000u) {
            PyErr_Format(PyExc_ValueError, "not a Thrift binary-protocol message (version word 0x%08x)", (uint32_t)first);
            return -1;
        }
        *mtype = first & 0xFF;
        *name_len = be32(b + 4);
        *name_at = 8;
        *header_len = 12 + *name_len;
    } else { /* old style: name length, name, type byte, seqid */
        *name_len = first;
        *name_at = 4;
        *header_len = 9 + *name_len;
    }
    if (*name_len < 0) {
        PyErr_Format(PyExc_ValueError, "a message name of %zd bytes", *name_len);
        return -1;
    }
    if (n < *header_len) return 0;
    if (first >= 0) *mtype = b[4 + *name_len];
    return 1;
}

/* message_bounds(buf) -> (name, mtype, seqid, header length, end) or None; see the top. */
static PyObject *message_bounds(PyObject *Py_UNUSED(self), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len, name_at, name_len, header_len;
    int mtype;
    PyObject *result = NULL;
    int found = parse_header(b, n, &name_at, &name_len, &mtype, &header_len);
    if (found < 0) goto done;
    if (found == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t end = skip(b, n, header_len, T_STRUCT, 0);
    if (end == INVALID) {
        PyErr_Format(PyExc_ValueError, "not a Thrift message body at offset %zd", header_len);
        goto done;
    }
    result = Py_BuildValue("(Nkinn)", PyUnicode_DecodeUTF8((const char *)b + name_at, name_len, "strict"), (unsigned long)mtype,
                           (int)be32(b + header_len - 4), header_len, end);
done:
    PyBuffer_Release(&view);
    return result;
}

/* -- exchange: a shortcut hit's backend round trip (see the top) ------------------------------- */

#define FIRST_READ 65536

/* Whether the complete struct at b[pos:n] has top-level field `fid` (has_field without Python). */
static int struct_has(const unsigned char *b, Py_ssize_t n, Py_ssize_t at, int fid) {
    while (at >= 0 && at < n) {
        int ftype = b[at];
        if (ftype == T_STOP || n - at < 3) return 0;
        if ((int16_t)((b[at + 1] << 8) | b[at + 2]) == fid) return 1;
        at = skip(b, n, at + 3, ftype, 1);
    }
    return 0;
}

/* Where the field goes in the complete reply b[0:end] (body at `body`): the offsets of the STOP
 * bytes it is inserted before, into `at` unless NULL (then only counted); their count. 0 for an
 * answer that is not the success value (a declared exception goes as it is); -1 for a success list
 * that is not of structs (relay.copy_body then says why). */
static Py_ssize_t fill_points(const unsigned char *b, Py_ssize_t end, Py_ssize_t body, int kind, int fid, Py_ssize_t *at) {
    if (end - body < 3 || b[body + 1] != 0 || b[body + 2] != 0) return 0; /* not the success value (field 0) */
    if (kind == FILL_STRUCT) {
        if (b[body] != T_STRUCT) return 0;
        Py_ssize_t stop = end - 2; /* the success struct's STOP, before the result struct's */
        if (struct_has(b, end, body + 3, fid)) return 0;
        if (at != NULL) at[0] = stop;
        return 1;
    }
    if (b[body] != T_LIST && b[body] != T_SET) return 0;
    if (end - body < 8) return -1;
    int etype = b[body + 3];
    int32_t count = be32(b + body + 4);
    if (count > 0 && etype != T_STRUCT) return -1;
    Py_ssize_t pos = body + 8, found = 0;
    for (int32_t i = 0; i < count; i++) {
        Py_ssize_t e = skip(b, end, pos, T_STRUCT, 1);
        if (e < 0) return -1;
        if (!struct_has(b, e, pos, fid)) {
            if (at != NULL) at[found] = e - 1;
            found++;
        }
        pos = e;
    }
    return found;
}

/* The reply b[0:end] with `field` inserted at each of the `count` offsets in `at`, as new bytes. */
static PyObject *filled(const unsigned char *b, Py_ssize_t end, const Py_ssize_t *at, Py_ssize_t count, const char *field,
                        Py_ssize_t field_len) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, end + count * field_len);
    if (out == NULL) return NULL;
    char *o = PyBytes_AS_STRING(out);
    Py_ssize_t from = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        memcpy(o, b + from, at[i] - from);
        o += at[i] - from;
        memcpy(o, field, field_len);
        o += field_len;
        from = at[i];
    }
    memcpy(o, b + from, end - from);
    return out;
}

static PyObject *x_result(int status, int code, Py_ssize_t header_len, PyObject *data) {
    if (data == NULL) return NULL;
    return Py_BuildValue("(iinN)", status, code, header_len, data);
}

int send_all(int fd, const char *p, Py_ssize_t left) {
    while (left > 0) {
        ssize_t sent;
        int err;
        Py_BEGIN_ALLOW_THREADS
        sent = send(fd, p, (size_t)left, MSG_NOSIGNAL);
        err = errno;
        Py_END_ALLOW_THREADS
        if (sent < 0) {
            if (err == EINTR) continue;
            return err;
        }
        p += sent;
        left -= sent;
    }
    return 0;
}

/* The round trip of exchange() (see the top), for it and serve_hits: a new result tuple, or NULL
 * with an exception set. */
PyObject *round_trip(int fd, const char *p, Py_ssize_t left, Py_ssize_t limit, int kind, const char *field,
                            Py_ssize_t field_len, int fid) {
    PyObject *result = NULL;
    unsigned char *buf = NULL;
    Py_ssize_t *points = NULL;
    Py_ssize_t n = 0, cap = FIRST_READ, walked = 0, header_len = -1, name_at, name_len, end = TRUNCATED;
    int mtype = 0, err = 0;
    err = send_all(fd, p, left); /* the request, whole */
    if (err != 0) {
        result = x_result(X_ERRNO, err, -1, PyBytes_FromStringAndSize(NULL, 0));
        goto done;
    }
    buf = PyMem_Malloc((size_t)cap);
    if (buf == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (;;) { /* the reply, until its message is complete */
        ssize_t got;
        Py_BEGIN_ALLOW_THREADS
        got = recv(fd, buf + n, (size_t)(cap - n), 0);
        err = errno;
        Py_END_ALLOW_THREADS
        if (got < 0 && err == EINTR) {
            if (PyErr_CheckSignals() < 0) goto done;
            continue;
        }
        if (got <= 0) {
            result = x_result(got == 0 ? X_CLOSED : X_ERRNO, got == 0 ? 0 : err, header_len,
                              PyBytes_FromStringAndSize((const char *)buf, n));
            goto done;
        }
        int drained = got < cap - n; /* the socket had no more for now: the message may be whole */
        n += got;
        if (header_len < 0) {
            int found = parse_header(buf, n, &name_at, &name_len, &mtype, &header_len);
            if (found < 0) goto done;
            if (found == 0) header_len = -1;
        }
        if (header_len >= 0 && (drained || n >= 2 * walked)) { /* walked again once what came doubled */
            end = skip(buf, n, header_len, T_STRUCT, 0);
            walked = n;
            if (end == INVALID) {
                PyErr_Format(PyExc_ValueError, "not a Thrift message body at offset %zd", header_len);
                goto done;
            }
            if (end >= 0) break;
        }
        if (n == cap) {
            if (cap >= limit) {
                result = x_result(X_OVER, mtype, header_len, PyBytes_FromStringAndSize((const char *)buf, n));
                goto done;
            }
            cap = cap * 2 < limit ? cap * 2 : limit;
            unsigned char *grown = PyMem_Realloc(buf, (size_t)cap);
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            buf = grown;
        }
    }
    Py_ssize_t count = 0;
    if (kind != FILL_NONE && mtype == REPLY) {
        count = fill_points(buf, end, header_len, kind, fid, NULL);
        if (count < 0) { /* not the shape the IDL has: relay.copy_body's error, from the whole reply */
            result = x_result(X_OVER, mtype, header_len, PyBytes_FromStringAndSize((const char *)buf, end));
            goto done;
        }
        points = PyMem_Malloc((size_t)(count + 1) * sizeof(Py_ssize_t));
        if (points == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        fill_points(buf, end, header_len, kind, fid, points);
    }
    result = x_result(X_DONE, mtype, header_len, filled(buf, end, points, count, field, field_len));
done:
    PyMem_Free(points);
    PyMem_Free(buf);
    return result;
}

static PyObject *exchange(PyObject *Py_UNUSED(self), PyObject *args) {
    int fd, kind, fid;
    Py_buffer request, field;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "iy*niy*i", &fd, &request, &limit, &kind, &field, &fid)) return NULL;
    PyObject *result = round_trip(fd, (const char *)request.buf, request.len, limit, kind, (const char *)field.buf, field.len, fid);
    PyBuffer_Release(&request);
    PyBuffer_Release(&field);
    return result;
}

static PyMethodDef methods[] = {
    {"value_end", value_end, METH_VARARGS,
     "value_end(buf, pos, ttype) -> offset past the Thrift value at pos, or -1 if buf ends first"},
    {"has_field", has_field, METH_VARARGS,
     "has_field(buf, pos, fid) -> whether the complete struct at pos has a top-level field fid"},
    {"message_bounds", message_bounds, METH_O,
     "message_bounds(buf) -> (name, mtype, seqid, header length, end or -1 while the body is incomplete), or None"},
    {"exchange", exchange, METH_VARARGS,
     "exchange(fd, request, limit, fill_kind, field, fid) -> (status, mtype or errno, header length, data); see the module's top"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "hmsproxy._thriftwalk", .m_size = -1, .m_methods = methods};

/* Numbers both languages use, defined here once (Python reads them from the module). */
static const struct {
    const char *name;
    long value;
} constants[] = {
    {"X_DONE", X_DONE}, {"X_OVER", X_OVER}, {"X_CLOSED", X_CLOSED}, {"X_ERRNO", X_ERRNO},
    {"FILL_NONE", FILL_NONE}, {"FILL_STRUCT", FILL_STRUCT}, {"FILL_LIST", FILL_LIST},
    {"H_FLUSH", H_FLUSH}, {"H_MISS", H_MISS}, {"H_FAILED", H_FAILED}, {"H_GONE", H_GONE},
    {"SHORTCUT_PLAN", SHORTCUT_PLAN}, {"SHORTCUT_ROUTER", SHORTCUT_ROUTER}, {"SHORTCUT_EXPIRES", SHORTCUT_EXPIRES},
    {"PLAN_HIT", PLAN_HIT},
};

PyMODINIT_FUNC PyInit__thriftwalk(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyTypeObject *types[] = {&InFlightType, &GateType, &TallyType, &HitSocketType, &HitLoopType};
    const char *names[] = {"InFlight", "Gate", "Tally", "HitSocket", "HitLoop"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (PyType_Ready(types[i]) < 0 || PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) goto failed;
    }
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) goto failed;
    }
    return m;
failed:
    Py_DECREF(m);
    return NULL;
}

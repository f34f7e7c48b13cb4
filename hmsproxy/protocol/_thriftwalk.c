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
 * Every read is bounds-checked: a truncated buffer is reported, never read past.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MAX_DEPTH 64
#define TRUNCATED (-1)
#define INVALID (-2)

enum { T_STOP = 0, T_BOOL = 2, T_BYTE = 3, T_DOUBLE = 4, T_I16 = 6, T_I32 = 8, T_I64 = 10,
       T_STRING = 11, T_STRUCT = 12, T_MAP = 13, T_SET = 14, T_LIST = 15 };

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
static Py_ssize_t skip(const unsigned char *b, Py_ssize_t n, Py_ssize_t pos, int ttype, int depth) {
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

static PyObject *value_end(PyObject *self, PyObject *args) {
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
static PyObject *has_field(PyObject *self, PyObject *args) {
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

/* message_bounds(buf) -> (name, mtype, seqid, header length, end) or None; see the top. */
static PyObject *message_bounds(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len, name_at, name_len, header_len;
    int mtype;
    PyObject *result = NULL;
    if (n < 8) goto incomplete;
    int32_t first = be32(b);
    if (first < 0) { /* strict: version and type, name length, name, seqid */
        if (((uint32_t)first & 0xFFFF0000u) != 0x80010000u) {
            PyErr_Format(PyExc_ValueError, "not a Thrift binary-protocol message (version word 0x%08x)", (uint32_t)first);
            goto done;
        }
        mtype = first & 0xFF;
        name_len = be32(b + 4);
        name_at = 8;
        header_len = 12 + name_len;
    } else { /* old style: name length, name, type byte, seqid */
        name_len = first;
        name_at = 4;
        header_len = 9 + name_len;
    }
    if (name_len < 0) {
        PyErr_Format(PyExc_ValueError, "a message name of %zd bytes", name_len);
        goto done;
    }
    if (n < header_len) goto incomplete;
    if (first >= 0) mtype = b[4 + name_len];
    Py_ssize_t end = skip(b, n, header_len, T_STRUCT, 0);
    if (end == INVALID) {
        PyErr_Format(PyExc_ValueError, "not a Thrift message body at offset %zd", header_len);
        goto done;
    }
    result = Py_BuildValue("(Nkinn)", PyUnicode_DecodeUTF8((const char *)b + name_at, name_len, "strict"), (unsigned long)mtype,
                           (int)be32(b + header_len - 4), header_len, end);
    goto done;
incomplete:
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"value_end", value_end, METH_VARARGS,
     "value_end(buf, pos, ttype) -> offset past the Thrift value at pos, or -1 if buf ends first"},
    {"has_field", has_field, METH_VARARGS,
     "has_field(buf, pos, fid) -> whether the complete struct at pos has a top-level field fid"},
    {"message_bounds", message_bounds, METH_O,
     "message_bounds(buf) -> (name, mtype, seqid, header length, end or -1 while the body is incomplete), or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hmsproxy._thriftwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__thriftwalk(void) { return PyModule_Create(&module); }

/*
 * rmadht._core: the thin compiled layer under the rmadht Python package.
 *
 * It checks only what keeps memory safe (handles open, buffer lengths);
 * shapes, dtypes and friendly messages are the pure-Python layer's job, so
 * a batch costs one buffer request per array here and no per-row work.
 *
 * The communicator arrives as a Fortran handle (mpi4py's comm.py2f()) and
 * is turned back with MPI_Comm_f2c.  That keeps the build free of mpi4py:
 * no mpi4py.h, no mpi4py in the isolated build environment, no dependence
 * on the mpi4py version; all it needs is that mpi4py and this module use
 * the same MPI library at run time, which rmadht/_mpi.py checks.
 *
 * The GIL is held through every call: a table handle must not be used by
 * two threads at once, and the GIL is what guarantees that here.
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rmadht_cache.h"

static PyObject *error_type; /* rmadht.errors.Error */

/* Raises rmadht.Error(code, message, name, detail) and returns NULL. */
static PyObject *raise_code(int code) {
  PyObject *exc = PyObject_CallFunction(error_type, "isss", code,
                                        rmadht_strerror(code),
                                        rmadht_errname(code),
                                        rmadht_error_detail());
  if (exc) {
    PyErr_SetObject(error_type, exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* A C-contiguous buffer of exactly len bytes. */
static int get_buffer(PyObject *obj, Py_buffer *view, int writable,
                      Py_ssize_t len, const char *what) {
  int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, view, flags) != 0) return -1;
  if (view->len != len) {
    PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what,
                 len, view->len);
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

/* n * size without overflow, as a Py_ssize_t. */
static int batch_bytes(Py_ssize_t n, size_t size, Py_ssize_t *out) {
  if (n < 0 || (n > 0 && size > (size_t)PY_SSIZE_T_MAX / (size_t)n)) {
    PyErr_SetString(PyExc_ValueError, "batch size out of range");
    return -1;
  }
  *out = (Py_ssize_t)((size_t)n * size);
  return 0;
}

static MPI_Comm comm_from_f(long long handle) {
  return MPI_Comm_f2c((MPI_Fint)handle);
}

#define STAT_FIELDS(X)                                                       \
  X(reads) X(hits) X(misses) X(writes) X(evictions) X(removes)               \
      X(checksum_retries) X(invalidations) X(round_trips) X(updates)         \
      X(write_probes)

static int put_u64(PyObject *d, const char *key, uint64_t v) {
  PyObject *o = PyLong_FromUnsignedLongLong(v);
  if (!o) return -1;
  int rc = PyDict_SetItemString(d, key, o);
  Py_DECREF(o);
  return rc;
}

/* Adds the rmadht_stats fields to d under their C names. */
static int put_stats(PyObject *d, const rmadht_stats *s) {
#define PUT(f)                                                               \
  if (put_u64(d, #f, s->f) != 0) return -1;
  STAT_FIELDS(PUT)
#undef PUT
  return 0;
}

static PyObject *stats_dict(const rmadht_stats *s) {
  PyObject *d = PyDict_New();
  if (d && put_stats(d, s) != 0) Py_CLEAR(d);
  return d;
}

static PyObject *info_dict(const rmadht *t) {
  rmadht_info i;
  int rc = rmadht_get_info(t, &i);
  if (rc != RMADHT_OK) return raise_code(rc);
  return Py_BuildValue(
      "{s:n,s:n,s:n,s:n,s:n,s:n,s:i,s:i,s:s,s:O,s:O}", "key_size",
      (Py_ssize_t)i.key_size, "value_size", (Py_ssize_t)i.value_size,
      "slot_size", (Py_ssize_t)i.slot_size, "slots_per_group",
      (Py_ssize_t)i.slots_per_group, "groups_per_rank",
      (Py_ssize_t)i.groups_per_rank, "slots_per_rank",
      (Py_ssize_t)i.slots_per_rank, "ranks", i.ranks, "rank", i.rank, "mode",
      rmadht_mode_name(i.mode), "node_local",
      i.node_local ? Py_True : Py_False, "node_loads",
      i.node_loads ? Py_True : Py_False);
}

static PyObject *path_call(rmadht *t, PyObject *arg,
                           int (*call)(rmadht *, const char *)) {
  PyObject *bytes = NULL;
  if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
  int rc = call(t, PyBytes_AS_STRING(bytes));
  Py_DECREF(bytes);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
}

static PyObject *closed_error(const char *what) {
  PyErr_Format(PyExc_ValueError, "operation on a closed %s", what);
  return NULL;
}

/* ---- Table ------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD rmadht *t;
  size_t key_size, value_size;
} TableObject;

#define TABLE_OPEN(self)                                                     \
  if (!(self)->t) return closed_error("Table")

static int Table_init(TableObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"comm", "key_size", "value_size", "bytes_per_rank",
                          "mode", "node_local", "progress_us", "gather",
                          "write_queue", NULL};
  long long comm;
  Py_ssize_t key_size, value_size, bytes;
  int mode, node_local, progress_us = 0, gather = RMADHT_GATHER_AUTO;
  int write_queue = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "Lnnnii|iii", names, &comm,
                                   &key_size, &value_size, &bytes, &mode,
                                   &node_local, &progress_us, &gather,
                                   &write_queue))
    return -1;
  if (self->t) {
    PyErr_SetString(PyExc_RuntimeError, "Table is already open");
    return -1;
  }
  if (key_size <= 0 || value_size <= 0 || bytes <= 0) {
    PyErr_SetString(PyExc_ValueError, "sizes must be positive");
    return -1;
  }
  rmadht_config cfg;
  rmadht_config_default(&cfg, (size_t)key_size, (size_t)value_size);
  cfg.bytes_per_rank = (size_t)bytes;
  cfg.mode = (enum rmadht_mode)mode;
  cfg.node_local = node_local;
  cfg.progress_us = progress_us;
  cfg.gather = gather;
  cfg.write_queue = write_queue;
  int rc = rmadht_create(comm_from_f(comm), &cfg, &self->t);
  if (rc != RMADHT_OK) {
    raise_code(rc);
    return -1;
  }
  self->key_size = (size_t)key_size;
  self->value_size = (size_t)value_size;
  return 0;
}

/* A garbage-collected table is not freed: rmadht_free is collective and a
   destructor runs on one rank at an unknown moment (maybe after
   MPI_Finalize).  The Python layer warns about tables never closed. */
static void Table_dealloc(TableObject *self) {
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Table_close(TableObject *self, PyObject *unused) {
  (void)unused;
  if (self->t) {
    int rc = rmadht_free(&self->t);
    self->t = NULL;
    if (rc != RMADHT_OK) return raise_code(rc);
  }
  Py_RETURN_NONE;
}

static PyObject *Table_closed(TableObject *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(self->t == NULL);
}

/* write(key, value) -> bool: True when another entry was evicted. */
static PyObject *Table_write(TableObject *self, PyObject *args) {
  PyObject *ko, *vo;
  Py_buffer k, v;
  if (!PyArg_ParseTuple(args, "OO", &ko, &vo)) return NULL;
  TABLE_OPEN(self);
  if (get_buffer(ko, &k, 0, (Py_ssize_t)self->key_size, "key") != 0)
    return NULL;
  if (get_buffer(vo, &v, 0, (Py_ssize_t)self->value_size, "value") != 0) {
    PyBuffer_Release(&k);
    return NULL;
  }
  int rc = rmadht_write(self->t, k.buf, v.buf);
  PyBuffer_Release(&k);
  PyBuffer_Release(&v);
  if (rc < 0) return raise_code(rc);
  return PyBool_FromLong(rc == RMADHT_EVICTED);
}

/* read(key, out) -> bool found; out (value_size bytes) filled if found. */
static PyObject *Table_read(TableObject *self, PyObject *args) {
  PyObject *ko, *vo;
  Py_buffer k, v;
  if (!PyArg_ParseTuple(args, "OO", &ko, &vo)) return NULL;
  TABLE_OPEN(self);
  if (get_buffer(ko, &k, 0, (Py_ssize_t)self->key_size, "key") != 0)
    return NULL;
  if (get_buffer(vo, &v, 1, (Py_ssize_t)self->value_size, "value") != 0) {
    PyBuffer_Release(&k);
    return NULL;
  }
  int rc = rmadht_read(self->t, k.buf, v.buf);
  PyBuffer_Release(&k);
  PyBuffer_Release(&v);
  if (rc < 0) return raise_code(rc);
  return PyBool_FromLong(rc == RMADHT_OK);
}

static PyObject *Table_remove(TableObject *self, PyObject *ko) {
  Py_buffer k;
  TABLE_OPEN(self);
  if (get_buffer(ko, &k, 0, (Py_ssize_t)self->key_size, "key") != 0)
    return NULL;
  int rc = rmadht_remove(self->t, k.buf);
  PyBuffer_Release(&k);
  if (rc < 0) return raise_code(rc);
  return PyBool_FromLong(rc == RMADHT_OK);
}

/* read_batch(n, keys, values_out, found_out): found_out is n bytes. */
static PyObject *Table_read_batch(TableObject *self, PyObject *args) {
  Py_ssize_t n, klen, vlen;
  PyObject *ko, *vo, *fo;
  if (!PyArg_ParseTuple(args, "nOOO", &n, &ko, &vo, &fo)) return NULL;
  TABLE_OPEN(self);
  if (batch_bytes(n, self->key_size, &klen) != 0 ||
      batch_bytes(n, self->value_size, &vlen) != 0)
    return NULL;
  Py_buffer k, v, f;
  if (get_buffer(ko, &k, 0, klen, "keys") != 0) return NULL;
  if (get_buffer(vo, &v, 1, vlen, "values") != 0) {
    PyBuffer_Release(&k);
    return NULL;
  }
  if (get_buffer(fo, &f, 1, n, "found") != 0) {
    PyBuffer_Release(&k);
    PyBuffer_Release(&v);
    return NULL;
  }
  int *status = malloc((n ? (size_t)n : 1) * sizeof *status);
  int rc = status ? rmadht_read_batch(self->t, (size_t)n, k.buf, v.buf, status)
                  : RMADHT_ERR_NOMEM;
  unsigned char *found = f.buf;
  for (Py_ssize_t i = 0; rc == RMADHT_OK && i < n; i++)
    found[i] = status[i] == RMADHT_OK;
  free(status);
  PyBuffer_Release(&k);
  PyBuffer_Release(&v);
  PyBuffer_Release(&f);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
}

/* write_batch(n, keys, values) -> number of evictions.  Raises the first
   failed item's error (e.g. contention); the other items are written. */
static PyObject *Table_write_batch(TableObject *self, PyObject *args) {
  Py_ssize_t n, klen, vlen, evicted = 0;
  PyObject *ko, *vo;
  if (!PyArg_ParseTuple(args, "nOO", &n, &ko, &vo)) return NULL;
  TABLE_OPEN(self);
  if (batch_bytes(n, self->key_size, &klen) != 0 ||
      batch_bytes(n, self->value_size, &vlen) != 0)
    return NULL;
  Py_buffer k, v;
  if (get_buffer(ko, &k, 0, klen, "keys") != 0) return NULL;
  if (get_buffer(vo, &v, 0, vlen, "values") != 0) {
    PyBuffer_Release(&k);
    return NULL;
  }
  int *status = malloc((n ? (size_t)n : 1) * sizeof *status);
  int rc = status
               ? rmadht_write_batch(self->t, (size_t)n, k.buf, v.buf, status)
               : RMADHT_ERR_NOMEM;
  for (Py_ssize_t i = 0; rc == RMADHT_OK && i < n; i++)
    evicted += status[i] == RMADHT_EVICTED;
  for (Py_ssize_t i = 0; rc == RMADHT_OK && i < n; i++)
    if (status[i] < 0) rc = status[i];
  free(status);
  PyBuffer_Release(&k);
  PyBuffer_Release(&v);
  if (rc != RMADHT_OK) return raise_code(rc);
  return PyLong_FromSsize_t(evicted);
}

static PyObject *Table_flush(TableObject *self, PyObject *unused) {
  (void)unused;
  TABLE_OPEN(self);
  int rc = rmadht_flush(self->t);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
}

static PyObject *Table_stats(TableObject *self, PyObject *unused) {
  (void)unused;
  TABLE_OPEN(self);
  rmadht_stats s;
  int rc = rmadht_get_stats(self->t, &s);
  return rc != RMADHT_OK ? raise_code(rc) : stats_dict(&s);
}

static PyObject *Table_stats_global(TableObject *self, PyObject *unused) {
  (void)unused;
  TABLE_OPEN(self);
  rmadht_stats s;
  int rc = rmadht_get_stats_global(self->t, &s);
  return rc != RMADHT_OK ? raise_code(rc) : stats_dict(&s);
}

static PyObject *Table_info(TableObject *self, PyObject *unused) {
  (void)unused;
  TABLE_OPEN(self);
  return info_dict(self->t);
}

static PyObject *Table_dump(TableObject *self, PyObject *path) {
  TABLE_OPEN(self);
  return path_call(self->t, path, rmadht_dump);
}

static PyObject *Table_restore(TableObject *self, PyObject *path) {
  TABLE_OPEN(self);
  return path_call(self->t, path, rmadht_restore);
}

static PyMethodDef Table_methods[] = {
    {"close", (PyCFunction)Table_close, METH_NOARGS, NULL},
    {"write", (PyCFunction)Table_write, METH_VARARGS, NULL},
    {"read", (PyCFunction)Table_read, METH_VARARGS, NULL},
    {"remove", (PyCFunction)Table_remove, METH_O, NULL},
    {"read_batch", (PyCFunction)Table_read_batch, METH_VARARGS, NULL},
    {"write_batch", (PyCFunction)Table_write_batch, METH_VARARGS, NULL},
    {"flush", (PyCFunction)Table_flush, METH_NOARGS, NULL},
    {"stats", (PyCFunction)Table_stats, METH_NOARGS, NULL},
    {"stats_global", (PyCFunction)Table_stats_global, METH_NOARGS, NULL},
    {"info", (PyCFunction)Table_info, METH_NOARGS, NULL},
    {"dump", (PyCFunction)Table_dump, METH_O, NULL},
    {"restore", (PyCFunction)Table_restore, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Table_getset[] = {
    {"closed", (getter)Table_closed, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rmadht._core.Table",
    .tp_doc = "rmadht table handle; use rmadht.Table.",
    .tp_basicsize = sizeof(TableObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Table_init,
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_methods = Table_methods,
    .tp_getset = Table_getset,
};

/* ---- Cache ------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD rmadht_cache *c;
  size_t n_in, n_out;
} CacheObject;

#define CACHE_OPEN(self)                                                     \
  if (!(self)->c) return closed_error("SurrogateCache")

/* The interpolation settings' buffers, all released by release_interp. */
typedef struct {
  Py_buffer digits, tolerance, phase, coarse;
  int have_digits, have_tolerance, have_phase, have_coarse;
} InterpBuffers;

static void release_interp(InterpBuffers *b) {
  if (b->have_digits) PyBuffer_Release(&b->digits);
  if (b->have_tolerance) PyBuffer_Release(&b->tolerance);
  if (b->have_phase) PyBuffer_Release(&b->phase);
  if (b->have_coarse) PyBuffer_Release(&b->coarse);
}

/* Fills cfg->interp from the optional arguments of Cache(): digits an
   int32 buffer of n_inputs items, tolerance float64 of n_outputs, phase
   uint8 of n_inputs or None, coarse digits int32 of n_inputs or None. */
static int get_interp(rmadht_cache_config *cfg, InterpBuffers *b, int method,
                      PyObject *dobj, PyObject *tobj, PyObject *pobj,
                      Py_ssize_t kmin, Py_ssize_t kmax, double radius,
                      PyObject *cobj, double coarse_scale, Py_ssize_t n_in,
                      Py_ssize_t n_out) {
  if (method == RMADHT_INTERP_NONE) return 0;
  Py_ssize_t dlen, tlen;
  if (batch_bytes(n_in, sizeof(int), &dlen) != 0 ||
      batch_bytes(n_out, sizeof(double), &tlen) != 0)
    return -1;
  if (kmin < 0 || kmax < 0) {
    PyErr_SetString(PyExc_ValueError, "neighbour counts must be >= 0");
    return -1;
  }
  if (get_buffer(dobj, &b->digits, 0, dlen, "interpolation digits") != 0)
    return -1;
  b->have_digits = 1;
  if (get_buffer(tobj, &b->tolerance, 0, tlen, "tolerance") != 0) return -1;
  b->have_tolerance = 1;
  if (pobj != Py_None) {
    if (get_buffer(pobj, &b->phase, 0, n_in, "phase") != 0) return -1;
    b->have_phase = 1;
  }
  if (cobj != Py_None) {
    if (get_buffer(cobj, &b->coarse, 0, dlen, "coarse digits") != 0)
      return -1;
    b->have_coarse = 1;
  }
  cfg->interp.method = (enum rmadht_interp_method)method;
  cfg->interp.digits = b->digits.buf;
  cfg->interp.tolerance = b->tolerance.buf;
  cfg->interp.phase = b->have_phase ? b->phase.buf : NULL;
  cfg->interp.min_neighbours = (size_t)kmin;
  cfg->interp.max_neighbours = (size_t)kmax;
  cfg->interp.radius = radius;
  cfg->interp.coarse_digits = b->have_coarse ? b->coarse.buf : NULL;
  cfg->interp.coarse_tolerance_scale = coarse_scale;
  return 0;
}

/* Cache(comm, n_inputs, n_outputs, digits, log10, zero_below,
         bytes_per_rank, mode, interp_method=0, interp_digits=None,
         tolerance=None, phase=None, min_neighbours=0, max_neighbours=0,
         radius=0, coarse_digits=None, coarse_tolerance_scale=0):
   digits an int32 buffer and log10 a uint8 buffer of
   n_inputs items each; interp_method an enum rmadht_interp_method, the
   other interpolation arguments as get_interp takes them. */
static int Cache_init(CacheObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"comm",           "n_inputs",       "n_outputs",
                          "digits",         "log10",          "zero_below",
                          "bytes_per_rank", "mode",           "interp_method",
                          "interp_digits",  "tolerance",      "phase",
                          "min_neighbours", "max_neighbours", "radius",
                          "coarse_digits",  "coarse_tolerance_scale",
                          NULL};
  long long comm;
  Py_ssize_t n_in, n_out, bytes, kmin = 0, kmax = 0;
  PyObject *dobj, *lobj, *idobj = Py_None, *tobj = Py_None, *pobj = Py_None,
           *cobj = Py_None;
  double zero_below, radius = 0, coarse_scale = 0;
  int mode, method = RMADHT_INTERP_NONE;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "LnnOOdni|iOOOnndOd", names,
                                   &comm, &n_in, &n_out, &dobj, &lobj,
                                   &zero_below, &bytes, &mode, &method,
                                   &idobj, &tobj, &pobj, &kmin, &kmax,
                                   &radius, &cobj, &coarse_scale))
    return -1;
  if (self->c) {
    PyErr_SetString(PyExc_RuntimeError, "SurrogateCache is already open");
    return -1;
  }
  if (n_in <= 0 || n_out <= 0 || bytes <= 0) {
    PyErr_SetString(PyExc_ValueError, "sizes must be positive");
    return -1;
  }
  Py_buffer d, l;
  Py_ssize_t dlen;
  if (batch_bytes(n_in, sizeof(int), &dlen) != 0) return -1;
  if (get_buffer(dobj, &d, 0, dlen, "digits") != 0) return -1;
  if (get_buffer(lobj, &l, 0, n_in, "log10") != 0) {
    PyBuffer_Release(&d);
    return -1;
  }
  rmadht_cache_config cfg;
  rmadht_cache_config_default(&cfg, (size_t)n_in, (size_t)n_out);
  cfg.digits = d.buf;
  cfg.log10 = l.buf;
  cfg.zero_below = zero_below;
  cfg.bytes_per_rank = (size_t)bytes;
  cfg.mode = (enum rmadht_mode)mode;
  InterpBuffers ib = {0};
  if (get_interp(&cfg, &ib, method, idobj, tobj, pobj, kmin, kmax, radius,
                 cobj, coarse_scale, n_in, n_out) != 0) {
    release_interp(&ib);
    PyBuffer_Release(&d);
    PyBuffer_Release(&l);
    return -1;
  }
  int rc = rmadht_cache_create(comm_from_f(comm), &cfg, &self->c);
  release_interp(&ib);
  PyBuffer_Release(&d);
  PyBuffer_Release(&l);
  if (rc != RMADHT_OK) {
    raise_code(rc);
    return -1;
  }
  self->n_in = (size_t)n_in;
  self->n_out = (size_t)n_out;
  return 0;
}

/* As Table_dealloc: never a collective call from a destructor. */
static void Cache_dealloc(CacheObject *self) {
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Cache_close(CacheObject *self, PyObject *unused) {
  (void)unused;
  if (self->c) {
    int rc = rmadht_cache_free(&self->c);
    self->c = NULL;
    if (rc != RMADHT_OK) return raise_code(rc);
  }
  Py_RETURN_NONE;
}

static PyObject *Cache_closed(CacheObject *self, void *unused) {
  (void)unused;
  return PyBool_FromLong(self->c == NULL);
}

/* lookup(n, inputs, outputs, hit, cached_inputs or None) */
static PyObject *Cache_lookup(CacheObject *self, PyObject *args) {
  Py_ssize_t n, ilen, olen;
  PyObject *io, *oo, *ho, *co;
  if (!PyArg_ParseTuple(args, "nOOOO", &n, &io, &oo, &ho, &co)) return NULL;
  CACHE_OPEN(self);
  if (batch_bytes(n, self->n_in * sizeof(double), &ilen) != 0 ||
      batch_bytes(n, self->n_out * sizeof(double), &olen) != 0)
    return NULL;
  Py_buffer in, out, hit, cin = {0};
  int have_cin = co != Py_None;
  if (get_buffer(io, &in, 0, ilen, "inputs") != 0) return NULL;
  if (get_buffer(oo, &out, 1, olen, "outputs") != 0) goto release_in;
  if (get_buffer(ho, &hit, 1, n, "hit") != 0) goto release_out;
  if (have_cin && get_buffer(co, &cin, 1, ilen, "cached_inputs") != 0)
    goto release_hit;
  int rc = rmadht_cache_lookup_inputs(self->c, (size_t)n, in.buf, out.buf,
                                      have_cin ? cin.buf : NULL, hit.buf);
  if (have_cin) PyBuffer_Release(&cin);
  PyBuffer_Release(&hit);
  PyBuffer_Release(&out);
  PyBuffer_Release(&in);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
release_hit:
  PyBuffer_Release(&hit);
release_out:
  PyBuffer_Release(&out);
release_in:
  PyBuffer_Release(&in);
  return NULL;
}

/* store(n, inputs, outputs) */
static PyObject *Cache_store(CacheObject *self, PyObject *args) {
  Py_ssize_t n, ilen, olen;
  PyObject *io, *oo;
  if (!PyArg_ParseTuple(args, "nOO", &n, &io, &oo)) return NULL;
  CACHE_OPEN(self);
  if (batch_bytes(n, self->n_in * sizeof(double), &ilen) != 0 ||
      batch_bytes(n, self->n_out * sizeof(double), &olen) != 0)
    return NULL;
  Py_buffer in, out;
  if (get_buffer(io, &in, 0, ilen, "inputs") != 0) return NULL;
  if (get_buffer(oo, &out, 0, olen, "outputs") != 0) {
    PyBuffer_Release(&in);
    return NULL;
  }
  int rc = rmadht_cache_store(self->c, (size_t)n, in.buf, out.buf);
  PyBuffer_Release(&in);
  PyBuffer_Release(&out);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
}

static PyObject *cache_stats_dict(const rmadht_cache_stats *s) {
  PyObject *d = stats_dict(&s->table);
  if (!d) return NULL;
  if (put_u64(d, "lookups", s->lookups) != 0 ||
      put_u64(d, "lookup_hits", s->lookup_hits) != 0 ||
      put_u64(d, "stores", s->stores) != 0 ||
      put_u64(d, "dropped", s->dropped) != 0 ||
      put_u64(d, "nonfinite", s->nonfinite) != 0 ||
      put_u64(d, "interpolated", s->interpolated) != 0 ||
      put_u64(d, "interpolated_coarse", s->interpolated_coarse) != 0 ||
      put_u64(d, "refused_neighbours", s->refused_neighbours) != 0 ||
      put_u64(d, "refused_outside", s->refused_outside) != 0 ||
      put_u64(d, "refused_phase", s->refused_phase) != 0 ||
      put_u64(d, "refused_error", s->refused_error) != 0 ||
      put_u64(d, "index_dropped", s->index_dropped) != 0)
    Py_CLEAR(d);
  return d;
}

static PyObject *Cache_stats(CacheObject *self, PyObject *unused) {
  (void)unused;
  CACHE_OPEN(self);
  rmadht_cache_stats s;
  int rc = rmadht_cache_get_stats(self->c, &s);
  return rc != RMADHT_OK ? raise_code(rc) : cache_stats_dict(&s);
}

static PyObject *Cache_stats_global(CacheObject *self, PyObject *unused) {
  (void)unused;
  CACHE_OPEN(self);
  rmadht_cache_stats s;
  int rc = rmadht_cache_get_stats_global(self->c, &s);
  return rc != RMADHT_OK ? raise_code(rc) : cache_stats_dict(&s);
}

static rmadht *cache_table(CacheObject *self) {
  rmadht *t = NULL;
  rmadht_cache_get_table(self->c, &t);
  return t;
}

static PyObject *Cache_flush(CacheObject *self, PyObject *unused) {
  (void)unused;
  CACHE_OPEN(self);
  int rc = rmadht_cache_flush(self->c);
  if (rc != RMADHT_OK) return raise_code(rc);
  Py_RETURN_NONE;
}

static PyObject *Cache_info(CacheObject *self, PyObject *unused) {
  (void)unused;
  CACHE_OPEN(self);
  return info_dict(cache_table(self));
}

static PyObject *Cache_dump(CacheObject *self, PyObject *path) {
  CACHE_OPEN(self);
  return path_call(cache_table(self), path, rmadht_dump);
}

static PyObject *Cache_restore(CacheObject *self, PyObject *path) {
  CACHE_OPEN(self);
  return path_call(cache_table(self), path, rmadht_restore);
}

static PyMethodDef Cache_methods[] = {
    {"close", (PyCFunction)Cache_close, METH_NOARGS, NULL},
    {"lookup", (PyCFunction)Cache_lookup, METH_VARARGS, NULL},
    {"store", (PyCFunction)Cache_store, METH_VARARGS, NULL},
    {"stats", (PyCFunction)Cache_stats, METH_NOARGS, NULL},
    {"stats_global", (PyCFunction)Cache_stats_global, METH_NOARGS, NULL},
    {"flush", (PyCFunction)Cache_flush, METH_NOARGS, NULL},
    {"info", (PyCFunction)Cache_info, METH_NOARGS, NULL},
    {"dump", (PyCFunction)Cache_dump, METH_O, NULL},
    {"restore", (PyCFunction)Cache_restore, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Cache_getset[] = {
    {"closed", (getter)Cache_closed, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject CacheType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rmadht._core.Cache",
    .tp_doc = "rmadht surrogate cache handle; use rmadht.SurrogateCache.",
    .tp_basicsize = sizeof(CacheObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Cache_init,
    .tp_dealloc = (destructor)Cache_dealloc,
    .tp_methods = Cache_methods,
    .tp_getset = Cache_getset,
};

/* ---- Module ----------------------------------------------------------- */

static PyObject *core_strerror(PyObject *mod, PyObject *arg) {
  (void)mod;
  int code = (int)PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(rmadht_strerror(code));
}

static PyObject *core_errname(PyObject *mod, PyObject *arg) {
  (void)mod;
  int code = (int)PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(rmadht_errname(code));
}

static PyObject *core_version(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyUnicode_FromString(rmadht_version());
}

/* Adds every code the library names as a module constant without the
   RMADHT_ prefix (OK, NOT_FOUND, ERR_ARG, ...), so a code added to the C
   library appears here without an edit. */
static int add_codes(PyObject *m) {
  const char *unknown = rmadht_errname(INT_MIN);
  for (int code = -64; code <= 64; code++) {
    const char *name = rmadht_errname(code);
    if (strcmp(name, unknown) == 0) continue;
    if (strncmp(name, "RMADHT_", 7) == 0) name += 7;
    if (PyModule_AddIntConstant(m, name, code) < 0) return -1;
  }
  return 0;
}

/* The C cache call alone, repeated: what a batch costs without Python,
   for bench/py_overhead.py.  Returns seconds per call. */
static PyObject *core_time_lookup(PyObject *mod, PyObject *args) {
  (void)mod;
  CacheObject *cache;
  PyObject *io;
  Py_ssize_t n, reps, ilen;
  if (!PyArg_ParseTuple(args, "O!nOn", &CacheType, &cache, &n, &io, &reps))
    return NULL;
  CACHE_OPEN(cache);
  if (reps <= 0 ||
      batch_bytes(n, cache->n_in * sizeof(double), &ilen) != 0)
    return PyErr_Format(PyExc_ValueError, "bad n or reps");
  Py_buffer in;
  if (get_buffer(io, &in, 0, ilen, "inputs") != 0) return NULL;
  double *out = malloc(((size_t)n * cache->n_out + 1) * sizeof *out);
  unsigned char *hit = malloc((size_t)n + 1);
  int rc = out && hit ? RMADHT_OK : RMADHT_ERR_NOMEM;
  double t0 = MPI_Wtime();
  for (Py_ssize_t r = 0; rc == RMADHT_OK && r < reps; r++)
    rc = rmadht_cache_lookup(cache->c, (size_t)n, in.buf, out, hit);
  double t = (MPI_Wtime() - t0) / (double)reps;
  free(out);
  free(hit);
  PyBuffer_Release(&in);
  if (rc != RMADHT_OK) return raise_code(rc);
  return PyFloat_FromDouble(t);
}

/* sizeof(MPI_Comm) here, compared with mpi4py's to catch a module built
   for another MPI than the one mpi4py loaded (4 for MPICH, 8 for Open
   MPI). */
static PyObject *core_comm_size(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyLong_FromSize_t(sizeof(MPI_Comm));
}

static PyMethodDef core_methods[] = {
    {"strerror", core_strerror, METH_O, "rmadht_strerror(code)"},
    {"errname", core_errname, METH_O, "rmadht_errname(code)"},
    {"version", core_version, METH_NOARGS, "rmadht_version()"},
    {"time_lookup", core_time_lookup, METH_VARARGS,
     "time_lookup(cache, n, inputs, reps) -> seconds per C lookup call"},
    {"sizeof_comm", core_comm_size, METH_NOARGS,
     "sizeof(MPI_Comm) in the MPI this module was built against"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "rmadht._core",
    "Compiled layer of rmadht; use the rmadht package.", -1, core_methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
  if (PyType_Ready(&TableType) < 0 || PyType_Ready(&CacheType) < 0)
    return NULL;
  PyObject *errors = PyImport_ImportModule("rmadht.errors");
  if (!errors) return NULL;
  error_type = PyObject_GetAttrString(errors, "Error");
  Py_DECREF(errors);
  if (!error_type) return NULL;
  PyObject *m = PyModule_Create(&core_module);
  if (!m) return NULL;
  Py_INCREF(&TableType);
  Py_INCREF(&CacheType);
  if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0 ||
      PyModule_AddObject(m, "Cache", (PyObject *)&CacheType) < 0 ||
      add_codes(m) < 0 ||
      PyModule_AddIntConstant(m, "LOCK_FREE", RMADHT_LOCK_FREE) < 0 ||
      PyModule_AddIntConstant(m, "FINE_LOCK", RMADHT_FINE_LOCK) < 0 ||
      PyModule_AddIntConstant(m, "COARSE_LOCK", RMADHT_COARSE_LOCK) < 0 ||
      PyModule_AddIntConstant(m, "INTERP_NONE", RMADHT_INTERP_NONE) < 0 ||
      PyModule_AddIntConstant(m, "INTERP_IDW", RMADHT_INTERP_IDW) < 0 ||
      PyModule_AddIntConstant(m, "INTERP_LINEAR", RMADHT_INTERP_LINEAR) < 0 ||
      PyModule_AddIntConstant(m, "MISS", RMADHT_CACHE_MISS) < 0 ||
      PyModule_AddIntConstant(m, "HIT", RMADHT_CACHE_HIT) < 0 ||
      PyModule_AddIntConstant(m, "INTERPOLATED", RMADHT_CACHE_INTERPOLATED) <
          0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

/* The call extension (one per machine, built by cffi): calls into a
   library through its table, and rhs(table, t, x, p, n) taking numpy
   arrays as they are.  Follows eom_table.h. */

typedef const struct eom_functions *eom_table;
static int eom_call_rhs(eom_table f, double t, const double *x,
                        const double *p, double *out)
{ return f->rhs(t, x, p, out); }
static long eom_call_rhs_batch(eom_table f, long k, const double *t, long ts,
                               const double *X, const double *p, double *OUT)
{ return f->rhs_batch(k, t, ts, X, p, OUT); }
static void eom_call_mf(eom_table f, double t, const double *x,
                        const double *p, double *M, double *g)
{ f->mf(t, x, p, M, g); }
static void eom_call_rates(eom_table f, double t, const double *x,
                           const double *z, const double *p, double *out)
{ f->rates(t, x, z, p, out); }
static void eom_call_acc(eom_table f, double t, const double *x,
                         const double *z, const double *p, double *out)
{ f->acc(t, x, z, p, out); }
static void eom_call_coords(eom_table f, double t, const double *x,
                            const double *p, double *out)
{ f->coords(t, x, p, out); }
static void eom_call_state(eom_table f, double t, const double *q,
                           const double *qd, const double *p, double *out)
{ f->state(t, q, qd, p, out); }
static void eom_call_forces(eom_table f, double t, const double *x,
                            const double *z, const double *p, double *out)
{ f->forces(t, x, z, p, out); }
static int eom_call_unknowns(eom_table f, double t, const double *x,
                             const double *p, double *z, int *path)
{ return f->unknowns(t, x, p, z, path); }

/* rhs(table, t, x, p, n) as a plain Python function: x and p float64
   ndarrays as they are (aligned, native, C-contiguous; x of n entries),
   the rates a new ndarray.  A cffi call converts its arrays with
   ffi.from_buffer, which costs more than the equations of a small model;
   this takes their data pointers.  None, with nothing raised, for any
   input it does not take as it is and for a failed solve: the caller
   then goes the cffi way, which converts, and reports failures. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static int eom_plain_vector(PyObject *a, Py_ssize_t n)
{
    if (!PyArray_Check(a)) return 0;
    PyArrayObject *v = (PyArrayObject *)a;
    return PyArray_TYPE(v) == NPY_DOUBLE && PyArray_NDIM(v) == 1
        && (n < 0 || PyArray_DIM(v, 0) == n) && PyArray_ISCARRAY_RO(v)
        && PyArray_ISNOTSWAPPED(v);
}

static PyObject *eom_fast_rhs(PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "rhs(table, t, x, p, n) takes 5 arguments");
        return NULL;
    }
    eom_table f = (eom_table)PyLong_AsVoidPtr(args[0]);
    if (f == NULL) return NULL;
    double t = PyFloat_AsDouble(args[1]);
    if (t == -1.0 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    Py_ssize_t n = PyLong_AsSsize_t(args[4]);
    if (n < 0) return NULL;
    if (!eom_plain_vector(args[2], n) || !eom_plain_vector(args[3], -1))
        Py_RETURN_NONE;
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *out = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (out == NULL) return NULL;
    int status = f->rhs(t, (const double *)PyArray_DATA((PyArrayObject *)args[2]),
                        (const double *)PyArray_DATA((PyArrayObject *)args[3]),
                        (double *)PyArray_DATA((PyArrayObject *)out));
    if (status) { Py_DECREF(out); Py_RETURN_NONE; }
    return out;
}

static PyMethodDef eom_fast_rhs_def = {
    "eom_fast_rhs", (PyCFunction)(void (*)(void))eom_fast_rhs, METH_FASTCALL,
    "rhs(table, t, x, p, n): the rates, or None (see numeric.compiled)"};

/* A new reference to the function, or NULL (numpy's C API unavailable).
   cffi calls without the GIL: it is taken here. */
static void *eom_fast_rhs_function(void)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *fn = NULL;
    if (PyArray_API == NULL && _import_array() < 0)
        PyErr_Clear();
    else
        fn = PyCFunction_New(&eom_fast_rhs_def, NULL);
    if (fn == NULL) PyErr_Clear();
    PyGILState_Release(gil);
    return fn;
}

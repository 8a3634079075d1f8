/* Stage one of synthreview.grouped_search in registers: the float32 minimum of
 * |r|^2 - 2 q.r (or of the full d^2) over every group of reference rows, the products never
 * written out. See grouped_search's module docstring for why and for the error bound.
 *
 * Layout of the reference (built by GroupedReference): n_groups blocks of (d + 1) x w float32,
 * w a multiple of 16; in block g, row 0 holds the group's row norms |r|^2 (PAD in the padding
 * columns) and rows 1..d the coordinates times -2 (0 in the padding columns).
 *
 * Kernels for AVX-512F and for AVX2 + FMA, chosen by the caller (levels() lists those this CPU
 * runs); both give the same bits. Without either (or off x86-64) levels() is empty and the
 * caller keeps its faiss / numpy path. The GIL is released while a kernel runs. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_KERNELS 1

/* ---- AVX-512F: 32 zmm registers, 6 rows x 4 vectors (64 columns) of accumulators ---- */
#define V __m512
#define VL 16
#define M_ROWS 6
#define NV_MAX 4
#define TGT __attribute__((target("avx512f")))
#define SUF(name) name##_avx512
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VMIN(a, b) _mm512_min_ps(a, b)
#define VREDMIN(v) _mm512_reduce_min_ps(v)
#include "fused_minima_kernel.h"
#undef V
#undef VL
#undef M_ROWS
#undef NV_MAX
#undef TGT
#undef SUF
#undef VLOAD
#undef VSET1
#undef VFMA
#undef VADD
#undef VMIN
#undef VREDMIN

/* ---- AVX2 + FMA: 16 ymm registers, 4 rows x 3 vectors (24 columns) of accumulators ---- */
__attribute__((target("avx2,fma"))) static inline float redmin_avx2(__m256 v)
{
    __m128 x = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_min_ps(x, _mm_movehl_ps(x, x));
    x = _mm_min_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}
#define V __m256
#define VL 8
#define M_ROWS 4
#define NV_MAX 3
#define TGT __attribute__((target("avx2,fma")))
#define SUF(name) name##_avx2
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VMIN(a, b) _mm256_min_ps(a, b)
#define VREDMIN(v) redmin_avx2(v)
#include "fused_minima_kernel.h"
#else
#define HAVE_KERNELS 0
#endif

#define MAX_ROWS_BLOCK 8

/* 2: AVX-512F, 1: AVX2 + FMA (as this CPU runs them); 0: none */
static int best_level(void)
{
#if HAVE_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 1;
#endif
    return 0;
}

static int check_level(int level)
{
    if (level < 1 || level > best_level()) {
        PyErr_Format(PyExc_ValueError, "kernel level %d is not available on this CPU", level);
        return -1;
    }
    return 0;
}

static int check_buffer(Py_buffer *b, Py_ssize_t items, Py_ssize_t itemsize, const char *what)
{
    if (b->len != items * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd", what, b->len,
                     items * itemsize);
        return -1;
    }
    return 0;
}

static PyObject *py_levels(PyObject *self, PyObject *args)
{
    int best = best_level();
    if (best == 2)
        return Py_BuildValue("(ss)", "avx512f", "avx2");
    if (best == 1)
        return Py_BuildValue("(s)", "avx2");
    return PyTuple_New(0);
}

/* minima(level, query, nq, d, layout, w, g0, g1, out, n_groups): for the nq x d float32 query
 * rows, out[i, g] = min over group g's columns of fl(|r|^2 + sum_k q_ik (-2 r_jk)) for g in
 * [g0, g1); out is nq x n_groups float32. */
static PyObject *py_minima(PyObject *self, PyObject *args)
{
    int level, d;
    Py_ssize_t nq, w, g0, g1, n_groups;
    Py_buffer query, layout, out;
    if (!PyArg_ParseTuple(args, "iy*niy*nnnw*n", &level, &query, &nq, &d, &layout, &w, &g0, &g1,
                          &out, &n_groups))
        return NULL;
    PyObject *result = NULL;
    float *tmp = NULL;
    if (check_level(level) || check_buffer(&query, nq * d, 4, "query") ||
        check_buffer(&layout, n_groups * (d + 1) * w, 4, "layout") ||
        check_buffer(&out, nq * n_groups, 4, "out"))
        goto done;
    if (w % 16 || d < 1 || g0 < 0 || g1 > n_groups || g0 > g1) {
        PyErr_SetString(PyExc_ValueError, "bad shape");
        goto done;
    }
    tmp = malloc(sizeof(float) * MAX_ROWS_BLOCK * d);
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
#if HAVE_KERNELS
    if (level == 2)
        minima_avx512(d, query.buf, nq, layout.buf, w, g0, g1, out.buf, n_groups, tmp);
    else
        minima_avx2(d, query.buf, nq, layout.buf, w, g0, g1, out.buf, n_groups, tmp);
#endif
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    free(tmp);
    PyBuffer_Release(&query);
    PyBuffer_Release(&layout);
    PyBuffer_Release(&out);
    return result;
}

/* self_minima(level, rows, norms, n, d, layout, w, bounds, n_groups, a, out, pad): the n x d
 * rows are the reference itself (group order, bounds int64 of n_groups + 1 edges); for group a,
 * out[i, b] (i in a, b >= a) and out[j, a] (j in b > a) = the minimum of fl(fl(n_i + n_j) +
 * sum_k x_ik (-2 x_jk)) over the other group's rows. Every cell is written by one call. */
static PyObject *py_self_minima(PyObject *self, PyObject *args)
{
    int level, d;
    Py_ssize_t n, w, n_groups, a;
    float pad;
    Py_buffer rows, norms, layout, bounds, out;
    if (!PyArg_ParseTuple(args, "iy*y*niy*ny*nnw*f", &level, &rows, &norms, &n, &d, &layout, &w,
                          &bounds, &n_groups, &a, &out, &pad))
        return NULL;
    PyObject *result = NULL;
    float *tmp = NULL, *colmin = NULL;
    if (check_level(level) || check_buffer(&rows, n * d, 4, "rows") ||
        check_buffer(&norms, n, 4, "norms") ||
        check_buffer(&layout, n_groups * (d + 1) * w, 4, "layout") ||
        check_buffer(&bounds, n_groups + 1, 8, "bounds") ||
        check_buffer(&out, n * n_groups, 4, "out"))
        goto done;
    const long long *edges = bounds.buf;
    if (w % 16 || d < 1 || a < 0 || a >= n_groups || edges[0] != 0 || edges[n_groups] != n) {
        PyErr_SetString(PyExc_ValueError, "bad shape");
        goto done;
    }
    for (Py_ssize_t g = 0; g < n_groups; g++)
        if (edges[g + 1] < edges[g] || edges[g + 1] - edges[g] > w) {
            PyErr_SetString(PyExc_ValueError, "bad group bounds");
            goto done;
        }
    tmp = malloc(sizeof(float) * MAX_ROWS_BLOCK * d);
    colmin = aligned_alloc(64, sizeof(float) * w);
    if (!tmp || !colmin) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
#if HAVE_KERNELS
    if (level == 2)
        self_minima_avx512(d, rows.buf, norms.buf, layout.buf, w, edges, n_groups, a, out.buf,
                           colmin, tmp, pad);
    else
        self_minima_avx2(d, rows.buf, norms.buf, layout.buf, w, edges, n_groups, a, out.buf,
                         colmin, tmp, pad);
#endif
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    free(tmp);
    free(colmin);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&norms);
    PyBuffer_Release(&layout);
    PyBuffer_Release(&bounds);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"levels", py_levels, METH_NOARGS,
     "levels() -> tuple of the kernels this CPU runs, best first ('avx512f', 'avx2')"},
    {"minima", py_minima, METH_VARARGS,
     "minima(level, query, nq, d, layout, w, g0, g1, out, n_groups): group minima of "
     "|r|^2 - 2 q.r (see fused_minima.c)"},
    {"self_minima", py_self_minima, METH_VARARGS,
     "self_minima(level, rows, norms, n, d, layout, w, bounds, n_groups, a, out, pad): group "
     "minima of d^2 of a set against itself, group a's tiles (see fused_minima.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fused_minima",
    "Register kernels of grouped_search's stage one (C; see fused_minima.c).", -1, methods,
};

PyMODINIT_FUNC PyInit_fused_minima(void) { return PyModule_Create(&module); }

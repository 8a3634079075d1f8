/* One instruction set's register kernels of fused_minima.c, included once per instruction set
 * with these macros defined: V (the vector type), VL (its float lanes), M_ROWS and NV_MAX (the
 * register block: M_ROWS rows x NV_MAX vectors of columns), TGT (the function attribute that
 * enables the instruction set), SUF(name) (the set's name suffix), VLOAD, VSET1, VFMA, VADD,
 * VMIN, VREDMIN. Every value is the same sequence of operations whatever the block shape or the
 * instruction set: a start value (n_j, or fl(n_i + n_j)) and then one fused multiply-add per
 * dimension in dimension order, so the results of every instruction set are the same bits. */

/* block: M_ROWS rows (row-major, stride d) against nv vectors of columns (layout rows stride w:
 * row 0 the column norms, rows 1..d the columns' -2x). rowmin[m] keeps each row's running
 * minimum (a vector); colmin (NULL: none) each column vector's minimum over the rows. rown
 * (NULL: none) adds the row norms to the start value, which makes the values full d^2. */
static inline __attribute__((always_inline)) TGT void SUF(block)(
    int nv, int d, const float *rows, const float *rown, const float *cols, long w, V *rowmin,
    V *colmin)
{
    V acc[M_ROWS][NV_MAX];
#pragma GCC unroll 8
    for (int v = 0; v < NV_MAX; v++) {
        if (v < nv) {
            V start = VLOAD(cols + v * VL);
#pragma GCC unroll 8
            for (int m = 0; m < M_ROWS; m++)
                acc[m][v] = rown ? VADD(VSET1(rown[m]), start) : start;
        }
    }
    for (int k = 0; k < d; k++) {
        const float *c = cols + (long)(k + 1) * w;
        V b[NV_MAX];
#pragma GCC unroll 8
        for (int v = 0; v < NV_MAX; v++)
            if (v < nv)
                b[v] = VLOAD(c + v * VL);
#pragma GCC unroll 8
        for (int m = 0; m < M_ROWS; m++) {
            V a = VSET1(rows[m * d + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV_MAX; v++)
                if (v < nv)
                    acc[m][v] = VFMA(a, b[v], acc[m][v]);
        }
    }
#pragma GCC unroll 8
    for (int m = 0; m < M_ROWS; m++) {
        V r = acc[m][0];
#pragma GCC unroll 8
        for (int v = 1; v < NV_MAX; v++)
            if (v < nv)
                r = VMIN(r, acc[m][v]);
        rowmin[m] = VMIN(rowmin[m], r);
    }
    if (colmin) {
#pragma GCC unroll 8
        for (int v = 0; v < NV_MAX; v++) {
            if (v < nv) {
                V c = acc[0][v];
#pragma GCC unroll 8
                for (int m = 1; m < M_ROWS; m++)
                    c = VMIN(c, acc[m][v]);
                colmin[v] = VMIN(colmin[v], c);
            }
        }
    }
}

/* the block with nv fixed at compile time (each case its own unrolled copy) */
static TGT void SUF(block_any)(
    int nv, int d, const float *rows, const float *rown, const float *cols, long w, V *rowmin,
    V *colmin)
{
    switch (nv) {
#define CASE(n)                                                                                   \
    case n:                                                                                       \
        if (n <= NV_MAX)                                                                          \
            SUF(block)(n, d, rows, rown, cols, w, rowmin, colmin);                                \
        break;
        CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
    }
}

/* nrows rows against one group's nvec column vectors: out[i * ostride] = the row's minimum over
 * the group's columns; colmin (NULL: none) takes each column's minimum over the rows (running:
 * the caller starts it at +inf). tmp holds M_ROWS * d floats (a last partial block of rows is
 * copied there, zero-padded, with norm pad so that its values never win a column minimum). */
static TGT void SUF(rows_vs_group)(
    int d, const float *rows, const float *rown, long nrows, const float *cols, long w, int nvec,
    float *out, long ostride, float *colmin, float *tmp, float pad)
{
    float tmpn[M_ROWS];
    for (long r0 = 0; r0 < nrows; r0 += M_ROWS) {
        const float *blk = rows + r0 * d;
        const float *blkn = rown ? rown + r0 : NULL;
        long here = nrows - r0 < M_ROWS ? nrows - r0 : M_ROWS;
        if (here < M_ROWS) {
            for (long i = 0; i < (long)M_ROWS * d; i++)
                tmp[i] = i < here * d ? blk[i] : 0.0f;
            for (int m = 0; m < M_ROWS; m++)
                tmpn[m] = m < here ? (rown ? rown[r0 + m] : 0.0f) : pad;
            blk = tmp;
            blkn = rown ? tmpn : NULL;
        }
        V rowmin[M_ROWS];
        for (int m = 0; m < M_ROWS; m++)
            rowmin[m] = VSET1(__builtin_inff());
        for (int v0 = 0; v0 < nvec; v0 += NV_MAX) {
            int nv = nvec - v0 < NV_MAX ? nvec - v0 : NV_MAX;
            SUF(block_any)(nv, d, blk, blkn, cols + (long)v0 * VL, w, rowmin,
                           colmin ? (V *)(colmin + (long)v0 * VL) : NULL);
        }
        for (long m = 0; m < here; m++)
            out[(r0 + m) * ostride] = VREDMIN(rowmin[m]);
    }
}

/* d^2 - |q|^2 minima of queries against groups [g0, g1) (see fused_minima.c: minima) */
static TGT void SUF(minima)(
    int d, const float *query, long nq, const float *layout, long w, long g0, long g1,
    float *out, long n_groups, float *tmp)
{
    for (long g = g0; g < g1; g++)
        SUF(rows_vs_group)(d, query, NULL, nq, layout + g * (long)(d + 1) * w, w, (int)(w / VL),
                           out + g, n_groups, NULL, tmp, 0.0f);
}

/* d^2 minima of group a's rows against groups b >= a, both directions (fused_minima.c) */
static TGT void SUF(self_minima)(
    int d, const float *rows, const float *rown, const float *layout, long w,
    const long long *bounds, long n_groups, long a, float *out, float *colmin, float *tmp,
    float pad)
{
    long a0 = bounds[a], a1 = bounds[a + 1];
    for (long b = a; b < n_groups; b++) {
        float *cm = b == a ? NULL : colmin;
        if (cm)
            for (long j = 0; j < w; j++)
                cm[j] = __builtin_inff();
        SUF(rows_vs_group)(d, rows + a0 * d, rown + a0, a1 - a0,
                           layout + b * (long)(d + 1) * w, w, (int)(w / VL), out + a0 * n_groups + b,
                           n_groups, cm, tmp, pad);
        if (cm)
            for (long j = bounds[b]; j < bounds[b + 1]; j++)
                out[j * n_groups + a] = cm[j - bounds[b]];
    }
}

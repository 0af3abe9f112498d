/* The linear solve of the compiled equations of motion: LU with partial
   pivoting, LDL^T for symmetric mass matrices, and the choice between
   them.  numeric.compiled puts it after the defines (NX, NZ, NZA,
   EOM_EXPLICIT, EOM_SYMMETRIC) and before the generated functions. */
/* Solve A z = b in place (b becomes z) by LU with partial pivoting, as
   LAPACK's dgesv; A is n x n, row-major.  1: zero or NaN pivot (singular),
   2: a non-finite solution. */
static int eom_lu_solve(int n, double *A, double *b)
{
    for (int k = 0; k < n; ++k) {
        int piv = k;
        double big = fabs(A[k * n + k]);
        for (int i = k + 1; i < n; ++i) {
            double v = fabs(A[i * n + k]);
            if (v > big) { big = v; piv = i; }
        }
        if (!(big > 0.0)) return 1;
        if (piv != k) {
            for (int j = k; j < n; ++j) {
                double s = A[k * n + j];
                A[k * n + j] = A[piv * n + j];
                A[piv * n + j] = s;
            }
            double s = b[k]; b[k] = b[piv]; b[piv] = s;
        }
        double inv = 1.0 / A[k * n + k];
        for (int i = k + 1; i < n; ++i) {
            double l = A[i * n + k] * inv;
            if (l != 0.0) {
                for (int j = k + 1; j < n; ++j) A[i * n + j] -= l * A[k * n + j];
                b[i] -= l * b[k];
            }
        }
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
        if (!isfinite(b[i])) return 2;
    }
    return 0;
}

/* Solve A z = b by LDL^T without pivoting, reading only the lower triangle
   of A (row-major NZ x NZ).  A symmetric matrix whose pivots d_j are all
   positive is positive definite, where this is backward stable; at the
   first pivot that is not (or not finite) it returns 1 with A and b
   untouched, for the LU fallback.  2: a non-finite solution. */
static int eom_ldl_solve(const double *A, double *b)
{
    double L[NZA * NZA], d[NZA], dinv[NZA], v[NZA];
    for (int j = 0; j < NZ; ++j) {
        double s = A[j * NZ + j];
        for (int k = 0; k < j; ++k) {
            v[k] = L[j * NZ + k] * d[k];
            s -= L[j * NZ + k] * v[k];
        }
        if (!(s > 0.0) || !isfinite(s)) return 1;
        double inv = 1.0 / s;
        d[j] = s;
        dinv[j] = inv;
        for (int i = j + 1; i < NZ; ++i) {
            double r = A[i * NZ + j];
            for (int k = 0; k < j; ++k) r -= L[i * NZ + k] * v[k];
            L[i * NZ + j] = r * inv;
        }
    }
    for (int i = 1; i < NZ; ++i) {
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= L[i * NZ + k] * b[k];
        b[i] = s;
    }
    for (int i = NZ - 1; i >= 0; --i) {
        double s = b[i] * dinv[i];
        for (int k = i + 1; k < NZ; ++k) s -= L[k * NZ + i] * b[k];
        b[i] = s;
        if (!isfinite(s)) return 2;
    }
    return 0;
}

/* The lower triangle of a symmetric A copied above the diagonal. */
static void eom_mirror(double *A)
{
    for (int i = 0; i < NZ; ++i)
        for (int j = i + 1; j < NZ; ++j) A[i * NZ + j] = A[j * NZ + i];
}

/* The solve of the right-hand side: which path, 1 LDL^T, 2 LU (0: none,
   explicit form), in *path; the status as eom_lu_solve's. */
static int eom_solve_mz(double *M, double *z, int *path)
{
    if (EOM_EXPLICIT) { *path = 0; return 0; }
    if (EOM_SYMMETRIC) {
        int status = eom_ldl_solve(M, z);
        if (status != 1) { *path = 1; return status; }
        eom_mirror(M);
    }
    *path = 2;
    return eom_lu_solve(NZ, M, z);
}

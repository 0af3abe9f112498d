/* The entry points of a compiled model, after its generated functions
   (eom_mf_solve, eom_rates): the right-hand side, the unknowns, and the
   right-hand side of a batch of states. */

/* x' = rhs(t, x): 0 on success, else the solver's status (3: non-finite
   rates).  out is written in full only on success. */
static int eom_rhs(double t, const double *x, const double *p, double *out)
{
    double M[NZA * NZA], z[NZA];
    int path;
    eom_mf_solve(t, x, p, M, z);
    int status = eom_solve_mz(M, z, &path);
    if (status) return status;
    eom_rates(t, x, z, p, out);
    for (int i = 0; i < NX; ++i)
        if (!isfinite(out[i])) return 3;
    return 0;
}

/* The unknowns z at (t, x) by the solve of eom_rhs; *path as
   eom_solve_mz's.  The status of the solve. */
static int eom_unknowns(double t, const double *x, const double *p, double *z,
                        int *path)
{
    double M[NZA * NZA];
    eom_mf_solve(t, x, p, M, z);
    return eom_solve_mz(M, z, path);
}

/* k states, row-major k x NX; t has stride ts (0: one time for all).
   Returns 0, or 1 + the index of the first state that failed. */
static long eom_rhs_batch(long k, const double *t, long ts, const double *X,
                          const double *p, double *OUT)
{
    for (long i = 0; i < k; ++i)
        if (eom_rhs(t[i * ts], X + i * NX, p, OUT + i * NX)) return i + 1;
    return 0;
}

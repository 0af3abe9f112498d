/* The table of a compiled model's functions: the one symbol a library
   exports, and what the call extension reads it through. */

struct eom_functions {
    int (*rhs)(double, const double *, const double *, double *);
    long (*rhs_batch)(long, const double *, long, const double *,
                      const double *, double *);
    void (*mf)(double, const double *, const double *, double *, double *);
    void (*rates)(double, const double *, const double *, const double *,
                  double *);
    void (*acc)(double, const double *, const double *, const double *,
                double *);
    void (*coords)(double, const double *, const double *, double *);
    void (*state)(double, const double *, const double *, const double *,
                  double *);
    void (*forces)(double, const double *, const double *, const double *,
                   double *);
    int (*unknowns)(double, const double *, const double *, double *, int *);
};

/* DOP853 with its step loop in C, for numeric.dop853: the explicit
   Runge-Kutta pair of order 8(5,3) of Dormand and Prince as Hairer,
   Norsett and Wanner give it (Solving Ordinary Differential Equations I,
   sec. II.10, and their code dop853.f), with the step-size control, error
   norm, first-step selection and dense output of scipy's solve_ivp
   "DOP853", so that the two take the same steps on the same problem.
   The right-hand side is a compiled model's own (its table's rhs): no call
   leaves C between two accepted steps but to the watch, when one is
   given, every `every` accepted steps.  Appended
   to eom_call.c in the call extension. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double DOP_C[16] = {
    0.0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274,
    0.2816496580927726, 0.3333333333333333, 0.25, 0.3076923076923077,
    0.6512820512820513, 0.6, 0.8571428571428571, 1.0, 1.0, 0.1, 0.2,
    0.7777777777777778};
static const double DOP_A[16][16] = {
    {
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0},
    {
        0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.037037037037037035, 0.0, 0.0, 0.17082860872947386,
        0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0},
    {
        0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596,
        -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.03709200011850479, 0.0, 0.0, 0.17038392571223998,
        0.10726203044637328, -0.015319437748624402, 0.008273789163814023,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.6241109587160757, 0.0, 0.0, -3.3608926294469414,
        -0.868219346841726, 27.59209969944671, 20.154067550477894,
        -43.48988418106996, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.47766253643826434, 0.0, 0.0, -2.4881146199716677,
        -0.590290826836843, 21.230051448181193, 15.279233632882423,
        -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0},
    {
        -0.9371424300859873, 0.0, 0.0, 5.186372428844064,
        1.0914373489967295, -8.149787010746927, -18.52006565999696,
        22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0},
    {
        2.273310147516538, 0.0, 0.0, -10.53449546673725,
        -2.0008720582248625, -17.9589318631188, 27.94888452941996,
        -2.8589982771350235, -8.87285693353063, 12.360567175794303,
        0.6433927460157636, 0.0, 0.0, 0.0, 0.0, 0.0},
    {
        0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409,
        1.8915178993145003, -5.801203960010585, 0.3111643669578199,
        -0.1521609496625161, 0.20136540080403034, 0.04471061572777259, 0.0,
        0.0, 0.0, 0.0},
    {
        0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483,
        -0.2462390374708025, -0.12419142326381637, 0.15329179827876568,
        0.00820105229563469, 0.007567897660545699, -0.008298, 0.0, 0.0, 0.0},
    {
        0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776,
        0.053541988307438566, -0.05492374857139099, 0.0, 0.0,
        -0.00010834732869724932, 0.0003825710908356584,
        -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0},
    {
        -0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164,
        7.683421196062599, 4.06898981839711, 0.3567271874552811, 0.0, 0.0,
        0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987,
        0.0},
};
static const double DOP_E3[13] = {
    -0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409,
    1.8915178993145003, -5.801203960010585, -0.4226823213237919,
    -0.1521609496625161, 0.20136540080403034, 0.02265179219836082, 0.0};
static const double DOP_E5[13] = {
    0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044,
    -0.4957589496572502, 1.6643771824549864, -0.35032884874997366,
    0.3341791187130175, 0.08192320648511571, -0.022355307863886294, 0.0};
static const double DOP_D[4][16] = {
    {
        -8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777,
        -3.0689499459498917, 2.38466765651207, 2.117034582445028,
        -0.871391583777973, 2.2404374302607883, 0.6315787787694688,
        -0.08899033645133331, 18.148505520854727, -9.194632392478356,
        -4.436036387594894},
    {
        10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817,
        165.20045171727028, -374.5467547226902, -22.113666853125306,
        7.733432668472264, -30.674084731089398, -9.332130526430229,
        15.697238121770845, -31.139403219565178, -9.35292435884448,
        35.81684148639408},
    {
        19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518,
        -189.17813819516758, 527.8081592054236, -11.57390253995963,
        6.8812326946963, -1.0006050966910838, 0.7777137798053443,
        -2.778205752353508, -60.19669523126412, 84.32040550667716,
        11.99229113618279},
    {
        -25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643,
        -231.5293791760455, 357.6391179106141, 93.40532418362432,
        -37.45832313645163, 104.0996495089623, 29.8402934266605,
        -43.53345659001114, 96.32455395918828, -39.17726167561544,
        -149.72683625798564},
};

#define DOP_SAFETY 0.9
#define DOP_MIN_FACTOR 0.2
#define DOP_MAX_FACTOR 10.0
#define DOP_EXPONENT (-1.0 / 8.0) /* -1 / (error estimator order + 1) */

/* sqrt(sum v_i^2 / n), scipy's RMS norm. */
static double dop_rms(long n, const double *v)
{
    double s = 0.0;
    for (long i = 0; i < n; ++i) s += v[i] * v[i];
    return sqrt(s) / sqrt((double)n);
}

/* One evaluation, counted; the rhs status (0: the rates are in out). */
static int dop_eval(eom_table f, const double *p, long *nfev, double t,
                    const double *x, double *out)
{
    ++*nfev;
    return f->rhs(t, x, p, out);
}

/* x = y + h * sum_{j<s} a[j] K[j] */
static void dop_combine(long n, const double *y, double h, const double *a,
                        int s, const double *K, double *x)
{
    for (long i = 0; i < n; ++i) {
        double d = 0.0;
        for (int j = 0; j < s; ++j) d += K[j * n + i] * a[j];
        x[i] = y[i] + d * h;
    }
}

/* Stage s at time ts: K[s] = rhs(ts, y + h sum_{j<s} a[j] K[j]), the
   stage's state written to y_s.  On failure (2) the state is copied to
   fail and the time to *t_fail. */
static int dop_stage(eom_table f, const double *p, long *nfev, long n,
                     double ts, const double *y, double h, const double *a,
                     int s, double *K, double *y_s, double *fail,
                     double *t_fail)
{
    dop_combine(n, y, h, a, s, K, y_s);
    if (dop_eval(f, p, nfev, ts, y_s, K + s * n) == 0) return 0;
    memcpy(fail, y_s, sizeof(double) * (size_t)n);
    *t_fail = ts;
    return 2;
}

/* Integrate x' = rhs(t, x) from a to b (b > a) starting at x, which holds
   the state at b on success.  h0 > 0 is the first step, else it is
   selected as scipy's select_initial_step does.  The states at the n_out
   increasing times t_out (within (a, b]) are written row by row into
   y_out from the dense output of the step that contains them; *done
   tells how many.  After every `every`-th accepted step watch(t, y), when
   given, may stop the integration by returning non-zero (Python's signal
   handlers run in it: a watch called now and then lets Ctrl-C stop a
   long segment).  info[0] is the time where
   it stopped (b on success), info[1] the larger of the last two accepted
   step sizes (the next segment's first step), info[2] the evaluations.
   Returns 0 on success; 1 when the step size falls below ten spacings of
   the doubles at t; 2 when the right-hand side fails (x then holds the
   state it failed at, info[0] its time); 3 when the watch stopped it (x
   the state at info[0]); 4 when memory runs out. */
static int eom_call_dop853(eom_table f, const double *p, long n, double a,
                           double b, double *x, double rtol, double atol,
                           double h0, double max_step, const double *t_out,
                           long n_out, double *y_out, long *done,
                           double *info, long every,
                           int (*watch)(double, const double *))
{
    double *K = malloc(sizeof(double) * (size_t)n * (16 + 7 + 4));
    if (K == NULL) return 4;
    double *F = K + 16 * n;               /* dense output, 7 rows */
    double *y_new = F + 7 * n, *tmp = y_new + n, *scale = tmp + n;
    double *err = scale + n;
    long nfev = 0, k_out = 0, accepted = 0;
    int status = 0;
    double t = a, h_last = 0.0, h_before = 0.0;
    *done = 0;
    info[0] = a;
    if (dop_eval(f, p, &nfev, t, x, K)) { status = 2; goto end; }
    double h_abs = h0;
    if (!(h0 > 0.0)) {
        /* scipy's select_initial_step, order 7. */
        double interval = b - a;
        for (long i = 0; i < n; ++i) scale[i] = atol + fabs(x[i]) * rtol;
        for (long i = 0; i < n; ++i) tmp[i] = x[i] / scale[i];
        double d0 = dop_rms(n, tmp);
        for (long i = 0; i < n; ++i) tmp[i] = K[i] / scale[i];
        double d1 = dop_rms(n, tmp);
        double hh = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
        if (hh > interval) hh = interval;
        for (long i = 0; i < n; ++i) tmp[i] = x[i] + hh * K[i];
        if (dop_eval(f, p, &nfev, t + hh, tmp, y_new)) {
            memcpy(x, tmp, sizeof(double) * (size_t)n);
            info[0] = t + hh;
            status = 2;
            goto end;
        }
        for (long i = 0; i < n; ++i) err[i] = (y_new[i] - K[i]) / scale[i];
        double d2 = dop_rms(n, err) / hh;
        double h1 = (d1 <= 1e-15 && d2 <= 1e-15)
            ? fmax(1e-6, hh * 1e-3)
            : pow(0.01 / fmax(d1, d2), 1.0 / 8.0);
        h_abs = fmin(fmin(100 * hh, h1), fmin(interval, max_step));
    }
    while (t < b) {
        double min_step = 10 * fabs(nextafter(t, INFINITY) - t);
        if (h_abs > max_step) h_abs = max_step;
        else if (h_abs < min_step) h_abs = min_step;
        int rejected = 0;
        double h, t_new;
        for (;;) {
            if (h_abs < min_step) { status = 1; info[0] = t; goto end; }
            t_new = t + h_abs;
            if (t_new > b) t_new = b;
            h = t_new - t;
            h_abs = fabs(h);
            /* Stages 1 to 11, then the solution (y_new, by the weights
               of row 12) and its rates K[12]. */
            for (int s = 1; s <= 12; ++s) {
                status = dop_stage(f, p, &nfev, n, t + DOP_C[s] * h, x, h,
                                   DOP_A[s], s, K, s < 12 ? tmp : y_new, x,
                                   info);
                if (status) goto end;
            }
            double e5 = 0.0, e3 = 0.0;
            for (long i = 0; i < n; ++i) {
                double sc = atol + fmax(fabs(x[i]), fabs(y_new[i])) * rtol;
                double s5 = 0.0, s3 = 0.0;
                for (int j = 0; j < 13; ++j) {
                    s5 += K[j * n + i] * DOP_E5[j];
                    s3 += K[j * n + i] * DOP_E3[j];
                }
                s5 /= sc;
                s3 /= sc;
                e5 += s5 * s5;
                e3 += s3 * s3;
            }
            e5 = sqrt(e5); e5 *= e5;
            e3 = sqrt(e3); e3 *= e3;
            double error = (e5 == 0.0 && e3 == 0.0)
                ? 0.0 : h_abs * e5 / sqrt((e5 + 0.01 * e3) * (double)n);
            if (error < 1.0) {
                double factor = error == 0.0
                    ? DOP_MAX_FACTOR
                    : fmin(DOP_MAX_FACTOR, DOP_SAFETY * pow(error, DOP_EXPONENT));
                if (rejected && factor > 1.0) factor = 1.0;
                h_abs *= factor;
                break;
            }
            h_abs *= fmax(DOP_MIN_FACTOR, DOP_SAFETY * pow(error, DOP_EXPONENT));
            rejected = 1;
        }
        /* Accepted: t -> t_new, x -> y_new (kept in tmp for the dense
           output until the outputs of this step are written). */
        h_before = h_last;
        h_last = h;
        double t_old = t;
        t = t_new;
        if (watch != NULL && ++accepted % every == 0 && watch(t, y_new)) {
            memcpy(x, y_new, sizeof(double) * (size_t)n);
            info[0] = t;
            status = 3;
            goto end;
        }
        if (k_out < n_out && t_out[k_out] <= t) {
            /* The dense output: three more stages, then the seven rows. */
            for (int s = 13; s < 16; ++s) {
                status = dop_stage(f, p, &nfev, n, t_old + DOP_C[s] * h, x, h,
                                   DOP_A[s], s, K, tmp, x, info);
                if (status) goto end;
            }
            for (long i = 0; i < n; ++i) {
                double dy = y_new[i] - x[i], f_old = K[i];
                F[i] = dy;
                F[n + i] = h * f_old - dy;
                F[2 * n + i] = 2 * dy - h * (K[12 * n + i] + f_old);
                for (int r = 0; r < 4; ++r) {
                    double d = 0.0;
                    for (int j = 0; j < 16; ++j) d += DOP_D[r][j] * K[j * n + i];
                    F[(3 + r) * n + i] = h * d;
                }
            }
            while (k_out < n_out && t_out[k_out] <= t) {
                double s = (t_out[k_out] - t_old) / h;
                double *row = y_out + k_out * n;
                for (long i = 0; i < n; ++i) {
                    double v = 0.0;
                    for (int r = 6; r >= 0; --r) {
                        v += F[r * n + i];
                        v *= ((6 - r) % 2 == 0) ? s : 1 - s;
                    }
                    row[i] = v + x[i];
                }
                ++k_out;
            }
        }
        memcpy(x, y_new, sizeof(double) * (size_t)n);
        memcpy(K, K + 12 * n, sizeof(double) * (size_t)n); /* f(t, x) */
    }
    info[0] = t;
end:
    *done = k_out;
    info[1] = fmax(h_last, h_before);
    info[2] = (double)nfev;
    free(K);
    return status;
}

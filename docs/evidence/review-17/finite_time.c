/* One-off timing of validate's check_finite (static in signature.c, included here). */
#include SIG_SRC
#include <sys/resource.h>
#include <time.h>

static double wall_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(void)
{
    enum { B = 64, L = 2048, F = 128, REPS = 5 };
    const int64_t blf[] = {B, L, F}, bl[] = {B, L}, whole[] = {(int64_t)B * L * 8};
    oq_tensor *t[3];
    oq_tensor_create(&t[0], OQ_DTYPE_FLOAT32, 3, blf, "features", NULL);
    oq_tensor_create(&t[1], OQ_DTYPE_FLOAT16, 2, bl, "h", NULL);
    oq_tensor_create(&t[2], OQ_DTYPE_FLOAT64, 1, whole, "c", NULL);
    for (int k = 0; k < 3; k++) memset(t[k]->data, 0x3c, oq_tensor_nbytes(t[k])); /* finite everywhere */
    int64_t lengths[B];
    for (int b = 0; b < B; b++) lengths[b] = L / 2 + (b * 97) % (L / 2);
    oq_batch_inputs in = {.t = t, .n = 3, .batch = B, .seq = L, .lengths = lengths};
    int64_t elems = 0;
    for (int b = 0; b < B; b++) elems += lengths[b] * (F + 1);
    elems += whole[0];
    oq_err err = {0};
    double w0 = wall_s(), c0 = cpu_s();
    for (int r = 0; r < REPS; r++)
        if (check_finite(&in, "x.npz", &err)) return 1;
    double w = (wall_s() - w0) / REPS, c = (cpu_s() - c0) / REPS;
    printf("%s wall_ms %.2f cpu_ms %.2f valid_elements %lld ns_per_element %.3f\n", LABEL, w * 1e3, c * 1e3,
           (long long)elems, c * 1e9 / (double)elems);
    return 0;
}

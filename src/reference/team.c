/* The threads of one reference call (reference-impl.h).
 *
 * A phase publishes (fn, ctx, tasks) under the mutex and resets the claim
 * counter, which holds the phase number in its high 32 bits and the next task
 * in the low 32: a thread claims a task with a compare-and-swap that also
 * checks the phase, so a worker that wakes late, after its phase ended, claims
 * nothing from the next one with the old function. The phase ends when its
 * last task completes, whoever ran it.
 *
 * Waiting (a worker for the next phase, the caller for the end of one) first
 * polls for up to SPIN_NS, then sleeps on a condition variable. Hand-overs
 * between phases take microseconds, so the threads of a call stay awake from
 * phase to phase: a thread that slept at every hand-over was woken by the
 * scheduler onto its waker's CPU whenever the other cores ran anything else,
 * even at the lowest priority, and the team shared one core. The bound keeps
 * what a wait can waste small when other processes hold the cores, and nothing
 * polls between calls: the workers end with the call.
 *
 * A new thread is started on a CPU of its own (oq_ref_start_cpu), then let go
 * anywhere the process may run: left to itself, Linux often put it on its
 * creator's CPU, where the two shared one core for the whole of a short call
 * (a 2-thread Attention at L = 1024 took 13-15 ms instead of 8 in half the
 * calls on the dev VM). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* Longest poll before sleeping: well above a hand-over between phases (a few
 * microseconds) and most tasks (tens of microseconds), which is how long a
 * thread waits for the slowest of a phase. */
#define SPIN_NS 100000

#include "reference/reference-impl.h"

struct oq_ref_team {
    int n;                 /* threads, the caller included */
    pthread_t *workers;    /* n - 1 */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    uint32_t phase;        /* under mu */
    int quit;              /* under mu */
    _Atomic uint32_t phase_seen; /* phase, also readable without mu (for polling) */
    _Atomic int quit_seen;
    oq_ref_task_fn fn;     /* the current phase, under mu */
    void *ctx;
    int64_t tasks;
    struct worker_arg *args;    /* n - 1, read by the workers until they end */
    cpu_set_t allowed;          /* the CPUs the creator may run on; valid if `placed` */
    int placed;                 /* workers start pinned and widen to `allowed` */
    _Atomic uint64_t claim;     /* phase << 32 | next task */
    _Atomic int64_t completed;  /* tasks of the current phase done */
};

typedef struct worker_arg {
    oq_ref_team *t;
    int id;
} worker_arg;

/* Claim and run tasks of `phase` until none is left; the last to finish signals. */
static void drain(oq_ref_team *t, uint32_t phase, oq_ref_task_fn fn, void *ctx, int64_t tasks,
                  int id)
{
    uint64_t c = atomic_load_explicit(&t->claim, memory_order_relaxed);
    for (;;) {
        if ((uint32_t)(c >> 32) != phase || (int64_t)(c & 0xffffffffu) >= tasks) return;
        if (!atomic_compare_exchange_weak_explicit(&t->claim, &c, c + 1, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        fn(ctx, (int64_t)(c & 0xffffffffu), id);
        if (atomic_fetch_add_explicit(&t->completed, 1, memory_order_acq_rel) + 1 == tasks) {
            pthread_mutex_lock(&t->mu);
            pthread_cond_signal(&t->done);
            pthread_mutex_unlock(&t->mu);
        }
        c = atomic_load_explicit(&t->claim, memory_order_relaxed);
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Poll done() for up to SPIN_NS; true when it came true. */
static int poll_for(int (*done)(oq_ref_team *, uint64_t), oq_ref_team *t, uint64_t arg)
{
    const double end = now_ns() + SPIN_NS;
    for (int i = 1;; i++) {
        if (done(t, arg)) return 1;
        cpu_relax();
        if (i % 64 == 0 && now_ns() > end) return 0;
    }
}

static int phase_moved(oq_ref_team *t, uint64_t seen)
{
    return atomic_load_explicit(&t->phase_seen, memory_order_relaxed) != (uint32_t)seen ||
           atomic_load_explicit(&t->quit_seen, memory_order_relaxed);
}

static int phase_done(oq_ref_team *t, uint64_t tasks)
{
    return atomic_load_explicit(&t->completed, memory_order_acquire) >= (int64_t)tasks;
}

static void *worker(void *p)
{
    const worker_arg *a = p;
    oq_ref_team *t = a->t;
    uint32_t seen = 0;
    /* Started on its own CPU; from there it may move like any thread. */
    if (t->placed) pthread_setaffinity_np(pthread_self(), sizeof t->allowed, &t->allowed);
    for (;;) {
        poll_for(phase_moved, t, seen);
        pthread_mutex_lock(&t->mu); /* the phase's job is read under the lock */
        while (t->phase == seen && !t->quit) pthread_cond_wait(&t->wake, &t->mu);
        if (t->quit) break;
        seen = t->phase;
        const oq_ref_task_fn fn = t->fn;
        void *ctx = t->ctx;
        const int64_t tasks = t->tasks;
        pthread_mutex_unlock(&t->mu);
        drain(t, seen, fn, ctx, tasks, a->id);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int oq_ref_start_cpu(const cpu_set_t *allowed, int me, int i)
{
    const int n = CPU_COUNT(allowed);
    if (me < 0 || me >= CPU_SETSIZE || n < 2 || i < 1 || !CPU_ISSET(me, allowed)) return -1;
    int order[CPU_SETSIZE], k = 0, mine = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, allowed)) {
            if (c == me) mine = k;
            order[k++] = c;
        }
    return order[(mine + i) % n];
}

/* Start worker i, on its own CPU where oq_ref_start_cpu names one (a CPU that
 * cannot be had, e.g. a cpuset changed meanwhile, only loses the placement);
 * 0 on success. */
static int start_worker(oq_ref_team *t, int i, worker_arg *arg, pthread_t *thread)
{
    const int cpu = t->placed ? oq_ref_start_cpu(&t->allowed, sched_getcpu(), i) : -1;
    pthread_attr_t attr;
    if (cpu >= 0 && !pthread_attr_init(&attr)) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        int rc = pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        if (!rc) rc = pthread_create(thread, &attr, worker, arg);
        pthread_attr_destroy(&attr);
        if (!rc) return 0;
    }
    return pthread_create(thread, NULL, worker, arg);
}

oq_status oq_ref_team_create(int threads, oq_ref_team **out, oq_err *err)
{
    oq_ref_team *t = calloc(1, sizeof *t);
    worker_arg *args = calloc((size_t)(threads > 1 ? threads : 1), sizeof *args);
    if (t) t->workers = calloc((size_t)(threads > 1 ? threads : 1), sizeof *t->workers);
    if (!t || !args || !t->workers) {
        if (t) free(t->workers);
        free(t);
        free(args);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory creating reference threads");
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->wake, NULL);
    pthread_cond_init(&t->done, NULL);
    t->n = 1;
    t->placed = !pthread_getaffinity_np(pthread_self(), sizeof t->allowed, &t->allowed);
    /* A thread that cannot be created only means fewer threads: the results are the same. */
    for (int i = 1; i < threads; i++) {
        args[i] = (worker_arg){t, i};
        if (start_worker(t, i, &args[i], &t->workers[t->n - 1])) break;
        t->n++;
    }
    t->args = args;
    *out = t;
    return OQ_OK;
}

void oq_ref_team_run(oq_ref_team *t, int64_t tasks, oq_ref_task_fn fn, void *ctx)
{
    OQ_ASSERT(tasks >= 0 && tasks < ((int64_t)1 << 32));
    if (t->n == 1 || tasks <= 1) {
        for (int64_t i = 0; i < tasks; i++) fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&t->mu);
    const uint32_t phase = ++t->phase;
    t->fn = fn;
    t->ctx = ctx;
    t->tasks = tasks;
    atomic_store_explicit(&t->completed, 0, memory_order_relaxed);
    atomic_store_explicit(&t->claim, (uint64_t)phase << 32, memory_order_relaxed);
    atomic_store_explicit(&t->phase_seen, phase, memory_order_relaxed);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    drain(t, phase, fn, ctx, tasks, 0);
    if (poll_for(phase_done, t, (uint64_t)tasks)) return;
    pthread_mutex_lock(&t->mu);
    while (atomic_load_explicit(&t->completed, memory_order_acquire) < tasks)
        pthread_cond_wait(&t->done, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

int oq_ref_team_size(const oq_ref_team *t)
{
    return t->n;
}

void oq_ref_team_free(oq_ref_team *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    atomic_store_explicit(&t->quit_seen, 1, memory_order_relaxed);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < t->n - 1; i++) pthread_join(t->workers[i], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->wake);
    pthread_cond_destroy(&t->done);
    free(t->workers);
    free(t->args);
    free(t);
}

/* Four threads (the main one and three created): each sums its quarter of an array into a shared total under a
 * mutex, then they meet at a barrier and thread 0 of the second phase signals the others through a condition
 * variable. Exercises clone, futex wait/wake, thread exit and join. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define N 400000

static long data[N];
static long total;
static int phase2_ready;
static long phase2_sum[THREADS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;

static void *work(void *arg)
{
    long id = (long)arg, local = 0;
    for (long i = id; i < N; i += THREADS)
        local += data[i] * (i % 7 + 1);
    pthread_mutex_lock(&lock);
    total += local;
    pthread_mutex_unlock(&lock);
    pthread_barrier_wait(&barrier);
    pthread_mutex_lock(&lock);
    if (id == 0) {
        phase2_ready = 1;
        pthread_cond_broadcast(&cond);
    }
    while (!phase2_ready)
        pthread_cond_wait(&cond, &lock);
    phase2_sum[id] = total + id;
    pthread_mutex_unlock(&lock);
    return (void *)(local & 0xffff);
}

int main(void)
{
    for (long i = 0; i < N; i++)
        data[i] = (i * 2654435761u) % 1000;
    long expect = 0;
    for (long i = 0; i < N; i++)
        expect += data[i] * (i % 7 + 1);
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t t[THREADS];
    for (long i = 1; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0) {
            puts("pthread_create failed");
            return 1;
        }
    void *mine = work((void *)0);
    long joined = (long)mine;
    for (int i = 1; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        joined += (long)r;
    }
    printf("total %ld (expected %ld), join sum %ld\n", total, expect, joined);
    for (int i = 0; i < THREADS; i++)
        printf("thread %d saw %ld\n", i, phase2_sum[i] - i);
    return total != expect;
}

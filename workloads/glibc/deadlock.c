/* Locks a default (non-recursive) mutex twice: the thread waits on its futex forever. The engine must report the
 * deadlock instead of hanging (tests/test_robust.py). Not compared with qemu (it hangs there). */
#include <pthread.h>
#include <stdio.h>

int main(void)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    printf("locked once\n");
    fflush(stdout);
    pthread_mutex_lock(&m);
    return 0;
}

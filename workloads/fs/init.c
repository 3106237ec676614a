/* The full-system image's /init: a static program the kernel runs as process 1 from the initramfs. For now it says
 * who it is on the console and powers the machine off (SBI system reset), so a boot has a defined end: the
 * memcached-class server on the kernel's sockets comes next (issue 29). */
#include <stdio.h>
#include <sys/reboot.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(void)
{
    struct utsname name;
    if (uname(&name) == 0)
        printf("kvsim-init: running on %s %s (%s)\n", name.sysname, name.release, name.machine);
    printf("kvsim-init: %ld cpus online\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("kvsim-init: powering off\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 1; /* reboot() only returns on failure; the kernel then panics on init's exit, which a test sees */
}

// Linux fd primitives that Glibc's Swift overlay does not import.
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <poll.h>
#include <termios.h>
#include <sys/ioctl.h>

// ioctl is variadic, which Swift cannot call: two fixed-signature doors to it.
static inline int ph_ioctl_pointer(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}
static inline int ph_ioctl_value(int fd, unsigned long request, long argument) {
    return ioctl(fd, request, argument);
}

// The calling thread's kernel id (gettid(2); glibc's wrapper is not imported by Swift).
#include <unistd.h>
#include <sys/syscall.h>
static inline pid_t ph_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

// Linux fd primitives that Glibc's Swift overlay does not import.
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <poll.h>
#include <termios.h>

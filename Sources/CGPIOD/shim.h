/* libgpiod from Debian: 1.6 (v1 API) on bookworm, 2.x (v2 API) on trixie and Raspberry Pi
   OS. Swift does not use it directly: CGPIOButton's C file wraps both behind one API. */
#include <gpiod.h>

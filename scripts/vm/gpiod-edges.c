/* scripts/vm/gpiod-apis.sh: gpio_button.c (Sources/CGPIOButton) on a real kernel line, as
   built with libgpiod v1 or v2: open (pull-up, active low), print the value, then each edge
   read (poll, then non-blocking reads) until N.  Usage: gpiod-edges CHIP LINE N */
#include "gpio_button.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc < 4) return 64;
    int applied = -1, want = atoi(argv[3]), seen = 0;
    printf("%s\n", ph_gpio_api());
    ph_gpio_line_status st;
    if (ph_gpio_line_status_get(argv[1], (unsigned)atoi(argv[2]), &st) == 0)
        printf("status: label %s, %u lines, used %d\n", st.label, st.lines, st.used);
    ph_gpio_button *b = ph_gpio_button_open(argv[1], (unsigned)atoi(argv[2]), 1, PH_GPIO_BIAS_PULL_UP, "gpiod-edges", &applied);
    if (!b) { printf("open failed: %s\n", strerror(errno)); return 1; }
    if (ph_gpio_line_status_get(argv[1], (unsigned)atoi(argv[2]), &st) == 0)
        printf("status after request: used %d by %s\n", st.used, st.consumer);
    printf("opened: bias applied %d, value %d, read with none waiting: %d\n", applied, ph_gpio_button_value(b),
           ph_gpio_button_read(b, (ph_gpio_edge[4]){0}, 4));
    fflush(stdout);
    while (seen < want) {
        struct pollfd p = { .fd = ph_gpio_button_fd(b), .events = POLLIN };
        if (poll(&p, 1, 20000) <= 0) { printf("timeout after %d edges\n", seen); break; }
        ph_gpio_edge e[16];
        int n = ph_gpio_button_read(b, e, 16);
        for (int i = 0; i < n; i++, seen++)
            printf("edge %d: %s at %llu ns\n", seen + 1, e[i].active ? "active" : "inactive", (unsigned long long)e[i].timestamp_ns);
        fflush(stdout);
    }
    ph_gpio_button_close(b);
    return seen == want ? 0 : 1;
}

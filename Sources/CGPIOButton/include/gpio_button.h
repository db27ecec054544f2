/* One GPIO input line with edge events, over libgpiod v1 (1.6, Debian 12) or v2 (2.x,
   Debian 13, Raspberry Pi OS), chosen when gpio_button.c is compiled. The API is this
   header's only, so Swift never sees which libgpiod it was built with. */
#ifndef PH_GPIO_BUTTON_H
#define PH_GPIO_BUTTON_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_gpio_button ph_gpio_button;

enum {
    PH_GPIO_BIAS_AS_IS = 0,
    PH_GPIO_BIAS_PULL_UP = 1,
    PH_GPIO_BIAS_PULL_DOWN = 2,
};

/* One edge: when (ns, CLOCK_MONOTONIC, the kernel's timestamp) and which way, as the
   logical value (active_low already applied): 1 = became active (pressed). */
typedef struct {
    uint64_t timestamp_ns;
    int active;
} ph_gpio_edge;

/* Requests `line` of the chip at `chip_path` (/dev/gpiochipN) as an input with events on
   both edges, non-blocking. `bias` is one of PH_GPIO_BIAS_*; when the kernel or the chip
   refuses it the line is requested as it is and *bias_applied is 0 (else 1).
   NULL with errno on failure (ENOENT: no such chip; EINVAL: no such line; EBUSY: in use). */
ph_gpio_button *ph_gpio_button_open(const char *chip_path, unsigned int line, int active_low, int bias,
                                    const char *consumer, int *bias_applied);

/* The fd to poll (readable when edges wait); owned by the button. */
int ph_gpio_button_fd(const ph_gpio_button *button);

/* Reads the edges waiting, at most `capacity`, without blocking: their number, 0 when none
   wait, -1 with errno on failure. */
int ph_gpio_button_read(ph_gpio_button *button, ph_gpio_edge *edges, int capacity);

/* The line's logical value now: 1 active, 0 inactive, -1 with errno. */
int ph_gpio_button_value(ph_gpio_button *button);

void ph_gpio_button_close(ph_gpio_button *button);

/* What `check` says of a line, without requesting it. */
typedef struct {
    unsigned int lines;   /* how many lines the chip has */
    int used;             /* the line is requested by someone (the kernel or a program) */
    char label[64];       /* the chip's label (pinctrl-bcm2711, gpio-sim.0-node0...) */
    char consumer[64];    /* who uses the line, when used */
} ph_gpio_line_status;

/* 0 and *status filled, or -1 with errno (ENOENT: no chip; ERANGE: the chip has no such
   line: status->lines says how many it has). */
int ph_gpio_line_status_get(const char *chip_path, unsigned int line, ph_gpio_line_status *status);

/* "libgpiod 1.6.3 (v1 API)" or "libgpiod 2.1.3 (v2 API)". */
const char *ph_gpio_api(void);

#endif

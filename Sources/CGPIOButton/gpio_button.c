/* See include/gpio_button.h. libgpiod's v1 API (1.x: gpiod_line_request, line events) and
   v2 API (2.x: line settings, line config, request config, edge event buffers) share the
   header's name and nothing else; GPIOD_LINE_BULK_MAX_LINES is defined by v1's gpiod.h
   only (checked on Debian 12's 1.6.3 and libgpiod v2.2.4's include/gpiod.h). */
#define _GNU_SOURCE
#include "gpio_button.h"

#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_text(char *to, size_t size, const char *from) {
    if (size == 0) return;
    snprintf(to, size, "%s", from ? from : "");
}

/* The kernel's edge fds block on read by default: the loop only reads when poll says so,
   but a spurious wakeup must never stall it. */
static int make_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* A bias the kernel (older than 5.5 for v1) or the chip's driver cannot set. */
static int bias_refused(int error) {
    return error == EINVAL || error == EOPNOTSUPP || error == ENOTSUP || error == ENOSYS;
}

#ifdef GPIOD_LINE_BULK_MAX_LINES
/* ---------------------------------------------------------------- libgpiod v1 (1.x) */

struct ph_gpio_button {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
    int fd;
};

ph_gpio_button *ph_gpio_button_open(const char *chip_path, unsigned int offset, int active_low, int bias,
                                    const char *consumer, int *bias_applied) {
    ph_gpio_button *button = calloc(1, sizeof *button);
    if (!button) return NULL;
    int saved;
    button->chip = gpiod_chip_open(chip_path);
    if (!button->chip) goto fail;
    if (offset >= gpiod_chip_num_lines(button->chip)) {
        errno = EINVAL;
        goto fail;
    }
    button->line = gpiod_chip_get_line(button->chip, offset);
    if (!button->line) goto fail;
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    int bias_flag = bias == PH_GPIO_BIAS_PULL_UP ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP
                  : bias == PH_GPIO_BIAS_PULL_DOWN ? GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN : 0;
    struct gpiod_line_request_config config = {
        .consumer = consumer, .request_type = GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES, .flags = flags | bias_flag,
    };
    int applied = 1;
    if (gpiod_line_request(button->line, &config, 0) < 0) {
        if (!bias_flag || !bias_refused(errno)) goto fail;
        config.flags = flags;
        applied = 0;
        if (gpiod_line_request(button->line, &config, 0) < 0) goto fail;
    }
    button->fd = gpiod_line_event_get_fd(button->line);
    if (button->fd < 0 || make_nonblocking(button->fd) < 0) goto fail;
    if (bias_applied) *bias_applied = bias_flag ? applied : 1;
    return button;
fail:
    saved = errno;
    ph_gpio_button_close(button);
    errno = saved;
    return NULL;
}

int ph_gpio_button_read(ph_gpio_button *button, ph_gpio_edge *edges, int capacity) {
    if (capacity <= 0) return 0;
    struct gpiod_line_event events[16];
    unsigned int want = capacity < 16 ? (unsigned int)capacity : 16;
    int n = gpiod_line_event_read_fd_multiple(button->fd, events, want);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    for (int i = 0; i < n; i++) {
        edges[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
        edges[i].active = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    }
    return n;
}

int ph_gpio_button_value(ph_gpio_button *button) {
    return gpiod_line_get_value(button->line);
}

void ph_gpio_button_close(ph_gpio_button *button) {
    if (!button) return;
    if (button->line) gpiod_line_release(button->line);
    if (button->chip) gpiod_chip_close(button->chip);
    free(button);
}

int ph_gpio_line_status_get(const char *chip_path, unsigned int offset, ph_gpio_line_status *status) {
    memset(status, 0, sizeof *status);
    struct gpiod_chip *chip = gpiod_chip_open(chip_path);
    if (!chip) return -1;
    status->lines = gpiod_chip_num_lines(chip);
    copy_text(status->label, sizeof status->label, gpiod_chip_label(chip));
    int result = 0;
    if (offset >= status->lines) {
        errno = ERANGE;
        result = -1;
    } else {
        struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
        if (!line) {
            result = -1;
        } else {
            status->used = gpiod_line_is_used(line);
            copy_text(status->consumer, sizeof status->consumer, gpiod_line_consumer(line));
        }
    }
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return result;
}

const char *ph_gpio_api(void) {
    static char text[64];
    snprintf(text, sizeof text, "libgpiod %s (v1 API)", gpiod_version_string());
    return text;
}

#else
/* ---------------------------------------------------------------- libgpiod v2 (2.x) */

struct ph_gpio_button {
    struct gpiod_chip *chip;
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
    unsigned int offset;
    int fd;
};

static struct gpiod_line_request *request_line(struct gpiod_chip *chip, unsigned int offset, int active_low,
                                               enum gpiod_line_bias bias, const char *consumer) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    if (settings && line_config && request_config
        && gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0
        && gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) == 0
        && gpiod_line_settings_set_bias(settings, bias) == 0) {
        gpiod_line_settings_set_active_low(settings, active_low != 0);
        gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC);
        if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0) {
            gpiod_request_config_set_consumer(request_config, consumer);
            request = gpiod_chip_request_lines(chip, request_config, line_config);
        }
    }
    int saved = errno;
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    gpiod_line_settings_free(settings);
    errno = saved;
    return request;
}

ph_gpio_button *ph_gpio_button_open(const char *chip_path, unsigned int offset, int active_low, int bias,
                                    const char *consumer, int *bias_applied) {
    ph_gpio_button *button = calloc(1, sizeof *button);
    if (!button) return NULL;
    int saved;
    button->offset = offset;
    button->chip = gpiod_chip_open(chip_path);
    if (!button->chip) goto fail;
    struct gpiod_chip_info *info = gpiod_chip_get_info(button->chip);
    if (!info) goto fail;
    size_t lines = gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    if (offset >= lines) {
        errno = EINVAL;
        goto fail;
    }
    enum gpiod_line_bias wanted = bias == PH_GPIO_BIAS_PULL_UP ? GPIOD_LINE_BIAS_PULL_UP
                                : bias == PH_GPIO_BIAS_PULL_DOWN ? GPIOD_LINE_BIAS_PULL_DOWN : GPIOD_LINE_BIAS_AS_IS;
    int applied = 1;
    button->request = request_line(button->chip, offset, active_low, wanted, consumer);
    if (!button->request) {
        if (wanted == GPIOD_LINE_BIAS_AS_IS || !bias_refused(errno)) goto fail;
        applied = 0;
        button->request = request_line(button->chip, offset, active_low, GPIOD_LINE_BIAS_AS_IS, consumer);
        if (!button->request) goto fail;
    }
    button->buffer = gpiod_edge_event_buffer_new(16);
    if (!button->buffer) goto fail;
    button->fd = gpiod_line_request_get_fd(button->request);
    if (button->fd < 0 || make_nonblocking(button->fd) < 0) goto fail;
    if (bias_applied) *bias_applied = applied;
    return button;
fail:
    saved = errno;
    ph_gpio_button_close(button);
    errno = saved;
    return NULL;
}

int ph_gpio_button_read(ph_gpio_button *button, ph_gpio_edge *edges, int capacity) {
    if (capacity <= 0) return 0;
    size_t want = capacity < 16 ? (size_t)capacity : 16;
    int n = gpiod_line_request_read_edge_events(button->request, button->buffer, want);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(button->buffer, (unsigned long)i);
        edges[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(event);
        edges[i].active = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
    }
    return n;
}

int ph_gpio_button_value(ph_gpio_button *button) {
    enum gpiod_line_value value = gpiod_line_request_get_value(button->request, button->offset);
    return value == GPIOD_LINE_VALUE_ERROR ? -1 : value == GPIOD_LINE_VALUE_ACTIVE;
}

void ph_gpio_button_close(ph_gpio_button *button) {
    if (!button) return;
    if (button->buffer) gpiod_edge_event_buffer_free(button->buffer);
    if (button->request) gpiod_line_request_release(button->request);
    if (button->chip) gpiod_chip_close(button->chip);
    free(button);
}

int ph_gpio_line_status_get(const char *chip_path, unsigned int offset, ph_gpio_line_status *status) {
    memset(status, 0, sizeof *status);
    struct gpiod_chip *chip = gpiod_chip_open(chip_path);
    if (!chip) return -1;
    int result = -1;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (info) {
        status->lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
        copy_text(status->label, sizeof status->label, gpiod_chip_info_get_label(info));
        gpiod_chip_info_free(info);
        if (offset >= status->lines) {
            errno = ERANGE;
        } else {
            struct gpiod_line_info *line = gpiod_chip_get_line_info(chip, offset);
            if (line) {
                status->used = gpiod_line_info_is_used(line);
                copy_text(status->consumer, sizeof status->consumer, gpiod_line_info_get_consumer(line));
                gpiod_line_info_free(line);
                result = 0;
            }
        }
    }
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return result;
}

const char *ph_gpio_api(void) {
    static char text[64];
    snprintf(text, sizeof text, "libgpiod %s (v2 API)", gpiod_api_version());
    return text;
}

#endif

int ph_gpio_button_fd(const ph_gpio_button *button) {
    return button->fd;
}

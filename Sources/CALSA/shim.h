#include <alsa/asoundlib.h>

/* alsa-lib prints its own errors to stderr; the appliance logs them once itself.
   A variadic handler cannot be written in Swift, so it lives here. */
static void pirate_hunter_alsa_quiet(const char *file, int line, const char *function, int err,
                                     const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline void pirate_hunter_alsa_silence_errors(void) {
    snd_lib_error_set_handler(pirate_hunter_alsa_quiet);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_status_line.c: cli/status_line: on a terminal (a pseudo-terminal here) each status is "\r", the text,
 * "clear to end of line", with the duration when there is one, cut to the terminal's width, and erased by
 * status_line_clear; a debuginfod download shows the same way; on a file nothing at all is written, cleared or not. */
#include "cli/status_line.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static const struct sampler_progress progress = {
    .elapsed_s = 1.26, .duration_s = 10, .samples = 1234, .lost = 5, .polls = 678, .counts_polls = true,
    .tasks_seen = 9,
};

/* A pseudo-terminal without output processing, cols wide: *out the terminal side, *master what it shows. */
static void open_terminal(FILE **out, int *master, unsigned short cols)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(*master >= 0);
    assert_int_equal(grantpt(*master), 0);
    assert_int_equal(unlockpt(*master), 0);
    int slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    struct termios tio;
    assert_int_equal(tcgetattr(slave, &tio), 0);
    cfmakeraw(&tio);
    assert_int_equal(tcsetattr(slave, TCSANOW, &tio), 0);
    struct winsize ws = { .ws_row = 24, .ws_col = cols };
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    *out = fdopen(slave, "w");
    assert_non_null(*out);
}

/* What the terminal shows so far. */
static void shown(int master, char *buf, size_t len)
{
    size_t n = 0;
    ssize_t r;
    int flags = fcntl(master, F_GETFL);
    fcntl(master, F_SETFL, flags | O_NONBLOCK);
    while (n + 1 < len && (r = read(master, buf + n, len - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
}

static void test_terminal(void **state)
{
    (void)state;
    FILE *out;
    int master;
    open_terminal(&out, &master, 200);
    struct status_line sl;
    status_line_init(&sl, out);
    status_line_show(&sl, &progress);
    struct sampler_progress open_ended = progress;
    open_ended.duration_s = 0;
    status_line_show(&sl, &open_ended);
    struct sampler_progress zero_probe = progress;     /* no poll probes: no polls to count */
    zero_probe.counts_polls = false;
    status_line_show(&sl, &zero_probe);
    /* a debuginfod download: the object's base name, and how far it is once the server sends it */
    status_line_show_download(&sl, "/srv/bin/app", 0, 0);
    status_line_show_download(&sl, "/srv/bin/app", 1500000, 9700000);
    status_line_show_download(&sl, "app", 2500000, 0);
    status_line_clear(&sl);
    status_line_clear(&sl);            /* nothing shown: nothing to erase */
    char buf[1024];
    shown(master, buf, sizeof(buf));
    assert_string_equal(buf, "\rtaskspy: recording 1.3 s / 10.0 s, 1234 samples, 5 lost, 678 polls, 9 tasks\033[K"
                             "\rtaskspy: recording 1.3 s, 1234 samples, 5 lost, 678 polls, 9 tasks\033[K"
                             "\rtaskspy: recording 1.3 s / 10.0 s, 1234 samples, 5 lost, 9 tasks\033[K"
                             "\rtaskspy: debuginfod: downloading the debug file of app: waiting for the server\033[K"
                             "\rtaskspy: debuginfod: downloading the debug file of app: 1.5 of 9.7 MB\033[K"
                             "\rtaskspy: debuginfod: downloading the debug file of app: 2.5 MB\033[K"
                             "\r\033[K");
    fclose(out);
    close(master);
}

static void test_narrow_terminal(void **state)
{
    (void)state;
    FILE *out;
    int master;
    open_terminal(&out, &master, 21);
    struct status_line sl;
    status_line_init(&sl, out);
    status_line_show(&sl, &progress);
    char buf[1024];
    shown(master, buf, sizeof(buf));
    assert_string_equal(buf, "\rtaskspy: recording 1\033[K");     /* 20 characters: never wraps */
    fclose(out);
    close(master);
}

static void test_not_a_terminal(void **state)
{
    (void)state;
    FILE *out = tmpfile();
    assert_non_null(out);
    struct status_line sl;
    status_line_init(&sl, out);
    status_line_show(&sl, &progress);
    status_line_show_download(&sl, "/srv/bin/app", 1, 2);
    status_line_clear(&sl);
    assert_int_equal(ftell(out), 0);
    fclose(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_narrow_terminal),
        cmocka_unit_test(test_not_a_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

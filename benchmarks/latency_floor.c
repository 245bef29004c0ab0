/*
 * The latency floor of this machine for broker_bench's latency load, without a broker and
 * without Python: a sender thread writes 100-byte messages stamped with CLOCK_MONOTONIC at a
 * fixed rate over loopback TCP to a relay process; the relay copies what it reads to a second
 * connection, after spinning SPIN_US microseconds of CPU per message (the work a broker does
 * per message); a receiver thread reads them back and records receive time - stamp.
 * Printed: p50, p99, p99.9 and max of that latency in ms, and the relay's CPU per message.
 *
 *     cc -O2 -pthread -o /tmp/latency_floor benchmarks/latency_floor.c
 *     /tmp/latency_floor 20000 2000 0      # messages, messages/s, SPIN_US
 *     /tmp/latency_floor 20000 2000 250    # a relay that spends a broker's CPU per message
 *
 * docs/performance.md ("The latency target against this machine's floor") has the figures.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MESSAGE 100

static int count, rate, spin_us;
static int out_fd, in_fd;
static double *latency_ms;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void no_delay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int listen_on(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4) ||
        getsockname(fd, (struct sockaddr *)&a, &len)) {
        perror("listen");
        exit(1);
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        perror("connect");
        exit(1);
    }
    no_delay(fd);
    return fd;
}

static void *sender(void *unused) {
    (void)unused;
    char buf[MESSAGE] = {0};
    uint64_t start = now_ns(), period = 1000000000ull / (uint64_t)rate;
    for (int i = 0; i < count; i++) {
        uint64_t due = start + (uint64_t)i * period, t;
        while ((t = now_ns()) < due) {
            struct timespec d = {0, (long)(due - t)};
            nanosleep(&d, NULL);
        }
        uint64_t stamp = now_ns();
        memcpy(buf, &stamp, sizeof stamp);
        if (write(out_fd, buf, MESSAGE) != MESSAGE) {
            perror("write");
            exit(1);
        }
    }
    return NULL;
}

static void *receiver(void *unused) {
    (void)unused;
    char buf[MESSAGE];
    for (int i = 0; i < count; i++) {
        int got = 0;
        while (got < MESSAGE) {
            ssize_t r = read(in_fd, buf + got, (size_t)(MESSAGE - got));
            if (r <= 0) {
                perror("read");
                exit(1);
            }
            got += (int)r;
        }
        uint64_t stamp;
        memcpy(&stamp, buf, sizeof stamp);
        latency_ms[i] = (double)(now_ns() - stamp) / 1e6;
    }
    return NULL;
}

static void relay(int from, int to) {
    char buf[65536];
    no_delay(to);
    for (;;) {
        ssize_t r = read(from, buf, sizeof buf);
        if (r <= 0) {
            struct rusage u;
            getrusage(RUSAGE_SELF, &u);
            double us = (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
                        (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
            printf("relay CPU %.1f us per message\n", us / count);
            fflush(stdout);
            _exit(0);
        }
        if (spin_us) {      /* the broker's work: CPU per message read */
            uint64_t until = now_ns() + (uint64_t)spin_us * 1000u * (uint64_t)(r / MESSAGE);
            while (now_ns() < until) {
            }
        }
        for (ssize_t done = 0; done < r;) {
            ssize_t w = write(to, buf + done, (size_t)(r - done));
            if (w <= 0)
                _exit(1);
            done += w;
        }
    }
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MESSAGES RATE [SPIN_US]\n", argv[0]);
        return 2;
    }
    count = atoi(argv[1]);
    rate = atoi(argv[2]);
    spin_us = argc > 3 ? atoi(argv[3]) : 0;
    int in_port, out_port;
    int in_listener = listen_on(&in_port), out_listener = listen_on(&out_port);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int from = accept(in_listener, NULL, NULL), to = accept(out_listener, NULL, NULL);
        relay(from, to);
    }
    out_fd = connect_to(in_port);
    in_fd = connect_to(out_port);
    latency_ms = malloc(sizeof(double) * (size_t)count);
    pthread_t s, r;
    pthread_create(&r, NULL, receiver, NULL);
    pthread_create(&s, NULL, sender, NULL);
    pthread_join(s, NULL);
    pthread_join(r, NULL);
    close(out_fd);
    waitpid(pid, NULL, 0);
    qsort(latency_ms, (size_t)count, sizeof(double), by_value);
    printf("%d messages at %d/s, spin %d us: p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms\n",
           count, rate, spin_us, latency_ms[count / 2], latency_ms[(int)(count * 0.99)],
           latency_ms[(int)(count * 0.999)], latency_ms[count - 1]);
    return 0;
}

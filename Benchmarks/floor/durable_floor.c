/* The least a durable webhook-to-push server can do per webhook, for fastpath.py's phase 5.
 *
 *     durable_floor PORT FILE
 *
 * One thread, no runtime: for each HTTP/1.1 request it appends three 4 KiB pages to FILE and
 * fdatasyncs (what one SQLite commit of a job writes, at the least), answers 200, writes one
 * line to a "push service" (a child process that echoes it back) and waits for the answer, then
 * writes one page without a sync (the outcome). Herald does all of that and more, so the CPU and
 * context switches this process spends per request at a paced rate are a floor no design of
 * Herald can go under on the same machine. The child's own CPU is not counted. Prints the port's
 * readiness as "ready".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAGE 4096
#define WAL_BYTES (4 << 20)
#define MAX_CONNECTIONS 1024

struct connection {
    int fd;
    size_t used;
    char buffer[16384];
};

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* The push service: answers each line with one line, as a push service answers each request. */
static void run_sink(int fd) {
    char buffer[4096];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n <= 0) _exit(0);
        if (write(fd, buffer, (size_t)n) != n) _exit(1);
    }
}

/* Length of the first complete request in c->buffer, or 0 if it is not all there yet. */
static size_t complete_request(const struct connection *c) {
    const char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t head = (size_t)(end - c->buffer) + 4;
    size_t body = 0;
    const char *length = memmem(c->buffer, head, "Content-Length:", 15);
    if (length) body = strtoul(length + 15, NULL, 10);
    return c->used >= head + body ? head + body : 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: durable_floor PORT FILE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) die("socketpair");
    pid_t child = fork();
    if (child == 0) {
        close(pair[0]);
        run_sink(pair[1]);
    }
    close(pair[1]);
    int sink = pair[0];

    int file = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (file < 0) die("open");
    static char page[3 * PAGE];
    memset(page, 'x', sizeof page);
    off_t offset = 0;

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) die("bind");
    if (listen(listener, 128) != 0) die("listen");
    int poller = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    printf("ready\n");
    fflush(stdout);

    static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    struct epoll_event ready[64];
    for (;;) {
        int count = epoll_wait(poller, ready, 64, -1);
        if (count < 0 && errno == EINTR) continue;
        for (int i = 0; i < count; i++) {
            struct connection *c = ready[i].data.ptr;
            if (!c) {
                int fd = accept(listener, NULL, NULL);
                if (fd < 0) continue;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                c = calloc(1, sizeof *c);
                c->fd = fd;
                struct epoll_event added = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(poller, EPOLL_CTL_ADD, fd, &added);
                continue;
            }
            ssize_t n = read(c->fd, c->buffer + c->used, sizeof c->buffer - c->used);
            if (n <= 0) {
                close(c->fd);
                free(c);
                continue;
            }
            c->used += (size_t)n;
            size_t length;
            while ((length = complete_request(c)) > 0) {
                /* The job, durably. */
                if (pwrite(file, page, sizeof page, offset) != (ssize_t)sizeof page) die("pwrite");
                offset = (offset + (off_t)sizeof page) % WAL_BYTES;
                if (fdatasync(file) != 0) die("fdatasync");
                if (write(c->fd, answer, sizeof answer - 1) < 0) break;
                /* The push, and its answer. */
                const char *line_end = memchr(c->buffer, '\n', length);
                size_t line = line_end ? (size_t)(line_end - c->buffer) + 1 : length;
                char echoed[4096];
                if (write(sink, c->buffer, line) != (ssize_t)line) die("sink write");
                for (size_t got = 0; got < line;) {
                    ssize_t r = read(sink, echoed, line - got < sizeof echoed ? line - got : sizeof echoed);
                    if (r <= 0) die("sink read");
                    got += (size_t)r;
                }
                /* The outcome, without a sync of its own. */
                if (pwrite(file, page, PAGE, offset) != PAGE) die("pwrite");
                offset = (offset + PAGE) % WAL_BYTES;
                memmove(c->buffer, c->buffer + length, c->used - length);
                c->used -= length;
            }
        }
    }
}

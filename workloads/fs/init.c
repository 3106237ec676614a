/* The full-system image's /init: a static program the kernel runs as process 1 from the initramfs. It says who it
 * is on the console; then, with no arguments, powers the machine off (SBI system reset), so a boot has a defined
 * end. With the arguments `mcd [port=11211] [mem=8m] [buckets=12] [item_max=4k] [corrupt_every=N]` (the kernel
 * command line's words after "--"; item_max is the store's largest chunk, a power of two from 4k to 2m, as
 * memcached's -I: an item's header, key and value must fit it, and each TCP connection's receive buffer and each
 * instance's response buffer are sized to carry one such item; corrupt_every is the server's test hook: every Nth
 * GET hit returns a flipped bit)
 * it serves the project's memcached-class server (workloads/mcd) on the kernel's UDP and TCP sockets: one
 * instance per online CPU, instance c a thread pinned to CPU c serving UDP and TCP port `port + c` (the ghost
 * client's steering), each with its own store. Every socket is bound before eth0 comes up, so no request can arrive before its server. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mcd_server.h"

/* The addresses of the ghost client's wire format (kvsim's client/wire.rs): the server is 10.0.0.2/24. */
#define SERVER_IP "10.0.0.2"
#define NETMASK "255.255.255.0"
/* The largest UDP payload of a 1514-byte frame. */
#define MAX_DATAGRAM 1472u
#define MAX_INSTANCES 8
/* Connection slots of the server's own network stack: unused on the kernel's sockets, but the init wants some. */
#define UNUSED_CONNS 16u
/* TCP connections an instance serves at once (the guest TCP's tcp_conns default). */
#define TCP_CONNS 16
/* The smallest TCP receive and response buffers (the guest TCP's receive buffer, MCD_TCP_RCVBUF); larger items
 * (item_max) get buffers of one largest item plus STREAM_SLACK for its request's or response's header and key. */
#define STREAM_BUF_MIN 16384u
#define STREAM_SLACK 1024u
#define ITEM_MAX_DEFAULT (MCD_MIN_CHUNK << (MCD_CLASSES - 1))
#define ITEM_MAX_LIMIT (MCD_MIN_CHUNK << (MCD_MAX_CLASSES - 1))

struct stream {
    int fd; /* -1: a free slot */
    uint32_t len;
    uint8_t *buf; /* stream_buf bytes, allocated when the connection is accepted */
};

struct instance {
    int cpu, fd, listen_fd;
    struct mcd_server server;
    struct mcd_conn conns[UNUSED_CONNS];
    struct stream tcp[TCP_CONNS];
    uint8_t *out; /* stream_buf bytes: the responses to one batch of a connection's requests */
};

/* Bytes of each TCP receive buffer and response buffer, and the room one response may need (a GET hit of the
 * largest item), from item_max (serve_memcached). */
static uint32_t stream_buf = STREAM_BUF_MIN, resp_room = MCD_APPBUF;

static void power_off(void)
{
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
}

static void fail(const char *what)
{
    /* The simulator stops with the console's last lines when the guest powers off while its client waits. */
    printf("kvsim-init: %s failed\n", what);
    perror("kvsim-init");
    power_off();
    exit(1);
}

/* memcached's size syntax, as the server's own argument parser: digits, then an optional k, m or g. */
static size_t parse_size(const char *v)
{
    char *end;
    size_t n = strtoull(v, &end, 10);
    switch (*end) {
    case 'k': case 'K': return n << 10;
    case 'm': case 'M': return n << 20;
    case 'g': case 'G': return n << 30;
    default: return n;
    }
}

static void set_addr(int fd, unsigned long request, const char *ip, const char *what)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "eth0", IFNAMSIZ - 1);
    struct sockaddr_in *a = (struct sockaddr_in *)&ifr.ifr_addr;
    a->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &a->sin_addr);
    if (ioctl(fd, request, &ifr) != 0)
        fail(what);
}

static void eth0_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        fail("socket for eth0");
    set_addr(fd, SIOCSIFADDR, SERVER_IP, "setting eth0's address");
    set_addr(fd, SIOCSIFNETMASK, NETMASK, "setting eth0's netmask");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "eth0", IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
        fail("reading eth0's flags");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
        fail("bringing eth0 up");
    close(fd);
}

/* A datagram: every request in it answered in one reply datagram. */
static void serve_datagram(struct instance *in, uint8_t *req, uint8_t *resp)
{
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    ssize_t n = recvfrom(in->fd, req, 2048, MSG_DONTWAIT, (struct sockaddr *)&peer, &plen);
    if (n <= 0)
        return;
    uint16_t req_id;
    uint32_t r = mcd_server_datagram(&in->server, req, (uint32_t)n, resp, MAX_DATAGRAM, &req_id);
    if (r)
        sendto(in->fd, resp, r, 0, (struct sockaddr *)&peer, plen);
}

/* A TCP connection's bytes: every whole request answered, the responses sent together (as many as the response
 * buffer holds at a time: every whole request in the buffer is answered before waiting for more bytes, which may
 * never come while the peer waits for those answers); a stream that is not requests, or a peer that closed, ends
 * the connection. */
static void close_stream(struct stream *c)
{
    close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
}

static void serve_stream(struct instance *in, struct stream *c)
{
    ssize_t n = recv(c->fd, c->buf + c->len, stream_buf - c->len, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && c->len == stream_buf)) {
        close_stream(c);
        return;
    }
    if (n > 0)
        c->len += (uint32_t)n;
    uint32_t off = 0;
    for (int more = 1; more;) {
        uint32_t out = 0;
        more = 0;
        for (;;) {
            uint32_t used, r;
            if (stream_buf - out < resp_room) {
                more = 1; /* the response buffer is full: send, then answer the rest */
                break;
            }
            int got = mcd_server_stream_request(&in->server, c->buf + off, c->len - off, in->out + out,
                                                stream_buf - out, &used, &r);
            if (got < 0) {
                close_stream(c);
                return;
            }
            if (got == 0)
                break;
            off += used;
            out += r;
        }
        for (uint32_t sent = 0; sent < out;) {
            ssize_t w = send(c->fd, in->out + sent, out - sent, 0);
            if (w <= 0)
                fail("sending a TCP response");
            sent += (uint32_t)w;
        }
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
}

static void accept_stream(struct instance *in)
{
    int fd = accept(in->listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    for (int k = 0; k < TCP_CONNS; k++) {
        if (in->tcp[k].fd < 0) {
            in->tcp[k].buf = malloc(stream_buf);
            if (!in->tcp[k].buf)
                fail("allocating a TCP receive buffer");
            int one = 1;
            /* Each response leaves at once, as memcached's (no Nagle wait for the previous one's ACK). */
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            in->tcp[k].fd = fd;
            in->tcp[k].len = 0;
            return;
        }
    }
    close(fd); /* every slot taken */
}

/* One instance: pinned to its CPU, it waits in poll() for its UDP socket, its listening TCP socket and its TCP
 * connections. */
static void *serve(void *arg)
{
    struct instance *in = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(in->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        fail("pinning a server thread");
    static uint8_t bufs[MAX_INSTANCES][2][2048];
    uint8_t *req = bufs[in->cpu][0], *resp = bufs[in->cpu][1];
    for (;;) {
        struct pollfd p[2 + TCP_CONNS];
        int slot[2 + TCP_CONNS], n = 2;
        p[0] = (struct pollfd){.fd = in->fd, .events = POLLIN};
        p[1] = (struct pollfd){.fd = in->listen_fd, .events = POLLIN};
        for (int k = 0; k < TCP_CONNS; k++) {
            if (in->tcp[k].fd >= 0) {
                slot[n] = k;
                p[n++] = (struct pollfd){.fd = in->tcp[k].fd, .events = POLLIN};
            }
        }
        if (poll(p, (nfds_t)n, -1) <= 0)
            continue;
        if (p[0].revents)
            serve_datagram(in, req, resp);
        if (p[1].revents)
            accept_stream(in);
        for (int i = 2; i < n; i++)
            if (p[i].revents)
                serve_stream(in, &in->tcp[slot[i]]);
    }
    return NULL;
}

static int serve_memcached(int argc, char **argv)
{
    unsigned port = 11211, buckets_log2 = 12, corrupt_every = 0;
    size_t mem = 8u << 20, item_max = ITEM_MAX_DEFAULT;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "port=", 5))
            port = (unsigned)strtoul(argv[i] + 5, NULL, 10);
        else if (!strncmp(argv[i], "mem=", 4))
            mem = parse_size(argv[i] + 4);
        else if (!strncmp(argv[i], "buckets=", 8))
            buckets_log2 = (unsigned)strtoul(argv[i] + 8, NULL, 10);
        else if (!strncmp(argv[i], "item_max=", 9))
            item_max = parse_size(argv[i] + 9);
        else if (!strncmp(argv[i], "corrupt_every=", 14))
            corrupt_every = (unsigned)strtoul(argv[i] + 14, NULL, 10);
        else {
            printf("kvsim-init: unknown server argument %s\n", argv[i]);
            power_off();
            return 1;
        }
    }
    unsigned classes = 1;
    while (((size_t)MCD_MIN_CHUNK << (classes - 1)) < item_max && classes < MCD_MAX_CLASSES)
        classes++;
    if (item_max < ITEM_MAX_DEFAULT || item_max > ITEM_MAX_LIMIT ||
        ((size_t)MCD_MIN_CHUNK << (classes - 1)) != item_max) {
        printf("kvsim-init: item_max=%zu is not a power of two from %u to %u\n", item_max, ITEM_MAX_DEFAULT,
               ITEM_MAX_LIMIT);
        power_off();
        return 1;
    }
    if (item_max > ITEM_MAX_DEFAULT) {
        stream_buf = (uint32_t)item_max + STREAM_SLACK;
        resp_room = stream_buf;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || cpus > MAX_INSTANCES)
        fail("counting the CPUs");
    static struct instance inst[MAX_INSTANCES];
    for (int c = 0; c < cpus; c++) {
        struct instance *in = &inst[c];
        in->cpu = c;
        void *store = aligned_alloc(64, mem);
        if (!store)
            fail("allocating a store");
        memset(store, 0, mem);
        if (mcd_server_init(&in->server, (uint16_t)(port + c), store, mem, buckets_log2, in->conns, UNUSED_CONNS) ||
            mcd_store_init_classes(&in->server.store, store, mem, buckets_log2, classes))
            fail("laying out a store");
        in->server.max_request = stream_buf;
        in->out = malloc(stream_buf);
        if (!in->out)
            fail("allocating a response buffer");
        in->server.corrupt_every = corrupt_every;
        in->fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(port + c))};
        if (in->fd < 0 || bind(in->fd, (struct sockaddr *)&a, sizeof a) != 0)
            fail("binding a server socket");
        in->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
        if (in->listen_fd < 0 || bind(in->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
            listen(in->listen_fd, TCP_CONNS) != 0)
            fail("listening on a server port");
        for (int k = 0; k < TCP_CONNS; k++)
            in->tcp[k].fd = -1;
    }
    eth0_up();
    printf("kvsim-init: eth0 up at %s; memcached-class server on UDP and TCP ports %u..%u, one thread per CPU\n",
           SERVER_IP, port, port + (unsigned)cpus - 1);
    fflush(stdout);
    pthread_t t[MAX_INSTANCES];
    for (int c = 1; c < cpus; c++)
        if (pthread_create(&t[c], NULL, serve, &inst[c]) != 0)
            fail("starting a server thread");
    serve(&inst[0]);
    return 0;
}

int main(int argc, char **argv)
{
    struct utsname name;
    if (uname(&name) == 0)
        printf("kvsim-init: running on %s %s (%s)\n", name.sysname, name.release, name.machine);
    printf("kvsim-init: %ld cpus online\n", sysconf(_SC_NPROCESSORS_ONLN));
    if (argc > 1 && !strcmp(argv[1], "mcd"))
        return serve_memcached(argc - 2, argv + 2);
    printf("kvsim-init: powering off\n");
    power_off();
    return 1; /* reboot() only returns on failure; the kernel then panics on init's exit, which a test sees */
}

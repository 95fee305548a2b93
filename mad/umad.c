#include "mad/umad.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sm/base/clock.h"
#include "sm/base/log.h"

struct umad_be {
	int fd;
	int issm_fd;
	int agents[256];	/* class -> agent id, -1 */
	char ca[UMAD_CA_NAME_LEN];
	int port;
	void *sendbuf;
	void *recvbuf;
	int recv_cap;		/* MADs recvbuf holds: MAD_SIZE, or more after a long one */
	int evfd;
	struct event *ev;	/* the watcher's eventfd */
	struct event *pump_ev;	/* activated by hand: keep pumping */
	mad_recv_fn cb;
	void *cb_arg;
	unsigned inflight;	/* requests sent, answers not yet seen */
	int (*pending)(void *);	/* the owner: are answers due? */
	void *pending_arg;
	int pumping;		/* the loop reads umad itself; the watcher rests */
	pthread_t thread;
	volatile int closing;	/* set by be_close: errors are expected */
	pthread_mutex_t lock;	/* armed, with cond */
	pthread_cond_t cond;
	int armed;		/* the watcher should wait for a MAD */
	int in_poll;		/* the watcher is waiting in umad_poll */
	/* under umad2sim: its socket to ibsim, and what waits for room in it */
	int sim_sock;		/* -1: not found, or the kernel */
	struct queued_mad *q;	/* ring of q_cap, grown up to SENDQ_MAX */
	uint32_t q_head, q_n, q_cap;
	uint64_t q_full;	/* sends refused with the ring full */
	struct event *flush_ev;
};

struct queued_mad {
	int agent;
	struct mad_addr to;
	uint32_t len;
	uint8_t mad[MAD_SIZE];
};

/*
 * Agents.  Under libumad2sim a MAD of a class with no agent kills the
 * process (its receiver thread locks the mutex of a NULL queue), and
 * umad2sim has 32 agent slots per device; the kernel refuses classes 0
 * and 0x50-0xff but 0x81 (the MAD layer drops those itself, or answers a
 * Get or Set with "unsupported").  So: the SM's own classes as servers,
 * then what host tools commonly send to an SM port (PerfMgt, CM, vendor
 * classes, ibping's 0x32 with the OpenIB OUI, ...) and the classes umad2sim
 * itself falls back to (0 for a MAD it could not read) as clients, so
 * that under umad2sim they reach the receive path, which answers them
 * "unsupported" where the class allows a response.  What is not in this
 * table still crashes the process under umad2sim (README: "Receive path").
 * No agent asks the kernel for RMPP: ibsmd does RMPP itself
 * (mad/transport.h), so no MAD longer than MAD_SIZE comes up.
 */
#define AGENT_SLOTS	32	/* umad2sim: struct ib_user_mad_reg_req agents[32] */

enum { CLIENT, SERVER };

static const struct agent_class {
	uint8_t cls, version, server;
} agent_classes[] = {
	{ IB_SMI_DIRECT_CLASS, 1, SERVER },
	{ IB_SMI_CLASS, 1, SERVER },		/* traps, SMInfo */
	{ IB_SA_CLASS, 2, SERVER },
	{ IB_PERFORMANCE_CLASS, 1, CLIENT },
	{ IB_BOARD_MGMT_CLASS, 1, CLIENT },
	{ IB_DEVICE_MGMT_CLASS, 1, CLIENT },
	{ IB_CM_CLASS, 2, CLIENT },
	{ IB_SNMP_CLASS, 1, CLIENT },
	{ 0x09, 1, CLIENT },			/* vendor range 1: 0x09-0x0f */
	{ 0x0a, 1, CLIENT },
	{ 0x0b, 1, CLIENT },
	{ 0x0c, 1, CLIENT },
	{ 0x0d, 1, CLIENT },
	{ 0x0e, 1, CLIENT },
	{ IB_VENDOR_RANGE1_END_CLASS, 1, CLIENT },
	{ 0x10, 1, CLIENT },			/* application: device administration */
	{ 0x11, 1, CLIENT },			/* boot management */
	{ 0x12, 1, CLIENT },			/* BIS */
	{ IB_CC_CLASS, 2, CLIENT },
	{ IB_VENDOR_RANGE2_START_CLASS, 1, CLIENT },	/* vendor range 2, OpenIB OUI */
	{ 0x31, 1, CLIENT },
	{ IB_VENDOR_OPENIB_PING_CLASS, 1, CLIENT },	/* ibping */
	{ IB_VENDOR_OPENIB_SYSSTAT_CLASS, 1, CLIENT },
	{ 0x00, 1, CLIENT },	/* umad2sim's class for a MAD it could not read */
	{ 0x02, 1, CLIENT },	/* reserved classes seen in the wild */
	{ 0x80, 1, CLIENT },
	{ 0xff, 1, CLIENT },
};

_Static_assert(sizeof(agent_classes) / sizeof(agent_classes[0]) <= AGENT_SLOTS,
	       "umad2sim has 32 agent slots");

/*
 * Receiving.  While answers are expected the event loop reads umad itself
 * (pump): umad2sim wakes a reader blocked in umad_recv directly, so one
 * MAD costs one wake-up instead of three (umad2sim's thread, a receiver
 * thread, the loop).  When nothing is expected the loop must not block in
 * umad, so the watcher thread waits for the next MAD instead (the umad fd
 * under umad2sim is a fake number no poller can watch), then wakes the
 * loop through an eventfd and rests until the loop goes idle again.
 *
 * umad2sim signals its condition variable once per MAD, and a signal
 * wakes one waiter.  So the loop never waits in umad while the watcher
 * may be waiting there too: the watcher would take the wake-up and the
 * loop would sleep out its timeout with the answer queued (2 ms lost, and
 * seen on 2026-11-23 to recur every 8 ms of a bring-up).  Instead the
 * loop lets the watcher's wake-up come through the eventfd.
 */
/* umad2sim hands out fake umad fds from this number on. */
#define UMAD2SIM_FD_MIN	1024

#define PUMP_BATCH	256	/* MADs per turn before other events run */
/*
 * ... and the time a turn may take: a MAD's handler may cost
 * milliseconds (an SA GetTable of every PathRecord), and 256 of them in
 * a row starved the timers (RMPP resends, polls, sweeps) and the traps
 * behind them for seconds.  Under ibsim 256 MADs take 3-6 ms.
 */
#define PUMP_BATCH_US	5000
#define PUMP_WAIT_MS	2	/* one wait for an expected answer */

static void *watcher(void *arg)
{
	struct umad_be *b = arg;
	for (;;) {
		pthread_mutex_lock(&b->lock);
		while (!b->armed)
			pthread_cond_wait(&b->cond, &b->lock);
		b->in_poll = 1;
		pthread_mutex_unlock(&b->lock);
		int r = umad_poll(b->fd, -1);
		if (__atomic_load_n(&b->closing, __ATOMIC_ACQUIRE))
			break;
		pthread_mutex_lock(&b->lock);
		b->in_poll = 0;
		int wake = 0;
		if (r >= 0 || r == -ETIMEDOUT || r == -EIO) {
			wake = b->armed;
			b->armed = 0;
		}
		pthread_mutex_unlock(&b->lock);
		if (!wake && r < 0 && r != -ETIMEDOUT && r != -EIO) {
			/* every 100 ms while the port is gone: a few lines, then a count */
			log_limited(LOG_ERROR, "umad_poll: %s", strerror(-r));
			usleep(100000);
			continue;
		}
		uint64_t one = 1;
		if (wake && write(b->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_err("eventfd write: %s", strerror(errno));
	}
	return NULL;
}

static void set_armed(struct umad_be *b, int armed)
{
	pthread_mutex_lock(&b->lock);
	b->armed = armed;
	if (armed)
		pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/*
 * If the watcher is still waiting in umad (it was armed when the loop went
 * idle and no MAD has come since), leaves the next wake-up to it: armed,
 * it will write the eventfd.  Returns 1 then, 0 if the loop may wait.
 */
static int watcher_holds_wait(struct umad_be *b)
{
	pthread_mutex_lock(&b->lock);
	int in = b->in_poll;
	if (in)
		b->armed = 1;
	pthread_mutex_unlock(&b->lock);
	return in;
}

static int is_request(uint8_t method)
{
	return !(method & IB_MAD_RESPONSE) && method != IB_MAD_METHOD_TRAP_REPRESS;
}

/*
 * A MAD longer than the buffer: umad gives its length and keeps it queued.
 * It is read once into a buffer grown for it and handed on with its real
 * length (the receive path drops and counts it).  Never seen without
 * kernel RMPP; the buffer only grows.
 */
static int grow_recvbuf(struct umad_be *b, int len)
{
	if (len <= b->recv_cap)
		return 0;
	void *p = realloc(b->recvbuf, umad_size() + (size_t)len);
	if (!p)
		return -1;
	b->recvbuf = p;
	b->recv_cap = len;
	return 0;
}

/* One MAD from umad to the callback; 0, or -1 when none came. */
static int recv_one(struct umad_be *b, int timeout_ms)
{
	int len = b->recv_cap;
	int r = umad_recv(b->fd, b->recvbuf, &len, timeout_ms);
	if (r == -ENOSPC && len > b->recv_cap && grow_recvbuf(b, len) == 0) {
		len = b->recv_cap;
		r = umad_recv(b->fd, b->recvbuf, &len, 0);
	}
	if (r < 0) {
		if (r != -EAGAIN && r != -ETIMEDOUT && r != -EIO)
			log_debug("umad_recv: %s", strerror(-r));
		return -1;
	}
	if (len < 0)
		len = 0;
	const uint8_t *mad = umad_get_mad(b->recvbuf);
	ib_mad_addr_t *a = umad_get_mad_addr(b->recvbuf);
	struct mad_addr from = {
		.lid = be16toh(a->lid),
		.qpn = be32toh(a->qpn),
		.qkey = be32toh(a->qkey),
		.pkey_index = a->pkey_index,
		.sl = a->sl,
	};
	int status = umad_status(b->recvbuf);
	/* an answer, or a request of ours that came back unsent */
	if (b->inflight && len >= MAD_HDR_SIZE &&
	    ((mad[3] & IB_MAD_RESPONSE) || status))
		b->inflight--;
	b->cb(b->cb_arg, mad, (size_t)len, &from, status);
	return 0;
}

/* Are answers due?  The owner knows (its transactions); else our count. */
static int expecting(struct umad_be *b)
{
	return b->pending ? b->pending(b->pending_arg) : b->inflight > 0;
}

static void go_idle(struct umad_be *b)
{
	b->pumping = 0;
	b->inflight = 0;
	set_armed(b, 1);
}

/*
 * The next turn of the pump: a 0-timeout timer, not event_active(): an
 * event activated from its own callback runs again before the loop looks
 * at timers and sockets, so a steady stream of MADs starved the routing
 * thread's wake-up (80 ms late on a 3456-host bring-up), the transaction
 * timers and the control socket.
 */
static void go_on(struct umad_be *b)
{
	static const struct timeval zero = { 0, 0 };
	evtimer_add(b->pump_ev, &zero);
}

static void flush(struct umad_be *b);

static void pump(struct umad_be *b)
{
	uint64_t t0 = clock_us();
	if (b->q_n)
		flush(b);
	for (int n = 0; n < PUMP_BATCH; n++) {
		if (__atomic_load_n(&b->closing, __ATOMIC_ACQUIRE))
			return;
		if (recv_one(b, 0) == 0) {
			if (b->q_n)	/* a reply each MAD may have queued */
				flush(b);
			if (clock_us() - t0 >= PUMP_BATCH_US)
				break;
			continue;
		}
		if (!expecting(b)) {
			go_idle(b);
			return;
		}
		if (watcher_holds_wait(b)) {
			b->pumping = 0;	/* on_rx starts again */
			return;
		}
		if (recv_one(b, PUMP_WAIT_MS) < 0)
			break;	/* nothing yet: let timers run, then wait again */
	}
	go_on(b);	/* let timers and sockets run, then go on */
}

static void on_pump(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

static void start_pumping(struct umad_be *b)
{
	if (b->pumping)
		return;
	b->pumping = 1;
	set_armed(b, 0);
	go_on(b);
}

static void on_rx(evutil_socket_t fd, short what, void *arg)
{
	struct umad_be *b = arg;
	uint64_t n;
	(void)what;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_err("eventfd read: %s", strerror(errno));
	start_pumping(b);
}

/*
 * Sending under umad2sim.  umad2sim's write() holds its global mutex
 * across a blocking write to its datagram socket to ibsim, and its
 * receiver thread takes the same mutex for every MAD it reads from
 * ibsim.  ibsim is single-threaded and retries a write to a client
 * whose receive queue is full for ever (EAGAIN in a loop).  So once
 * ibsim has more to send us than our socket holds while our socket to
 * it is full -- a storm of traps from a host, each answered with a
 * TrapRepress -- our write blocks holding the mutex, the receiver thread
 * blocks on the mutex and stops draining, ibsim spins writing to us and
 * never reads what we wrote: all three hang (seen with 20,000 traps
 * against an ASan ibsmd, 2026-11-24).  Hence: never write when the
 * socket would block.  The socket is found once (bound to
 * "<IBSIM_SOCKNAME>:in<pid>", connected to ibsim) and given a send
 * timeout of SEND_WAIT_US: only our loop writes it (umad2sim's receiver
 * thread reads another socket).  A write may wait that long for ibsim to
 * read -- during a big bring-up ibsim is often a little behind, and
 * waiting is what it always did -- but no longer: then it fails
 * (umad2sim prints "cannot write", umad_send fails with EAGAIN), the
 * mutex is released, and the MAD waits in a ring, in order, and goes
 * out from a 1 ms timer and after each MAD read as poll() (which checks
 * our send buffer and ibsim's receive queue, the two places a write
 * waits for) shows room -- the loop meanwhile goes on reading, so
 * umad2sim's receiver drains, ibsim moves on and reads us.  No system
 * call is added while writes go through: a poll() before every write, or
 * a non-blocking socket whose writes queue whenever ibsim is a moment
 * behind, cost 5-15% of a 3456-host bring-up.
 * A full ring refuses the MAD (-1: a request counts as not sent, a reply
 * is lost, as a full send queue would lose it on hardware).
 */
#define SENDQ_FIRST	1024
#define SENDQ_MAX	32768	/* 9 MB at most, under a storm only */
#define FLUSH_MS	1
#define SEND_WAIT_US	2000	/* the longest a write waits for ibsim */

static int sock_writable(const struct umad_be *b)
{
	struct pollfd p = { .fd = b->sim_sock, .events = POLLOUT };
	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

static int send_now(struct umad_be *b, int agent, const uint8_t *mad,
		    size_t len, const struct mad_addr *to)
{
	memset(b->sendbuf, 0, umad_size());
	umad_set_addr(b->sendbuf, (int)to->lid, (int)to->qpn, to->sl,
		      (int)to->qkey);
	memcpy(umad_get_mad(b->sendbuf), mad, len);
	int r = umad_send(b->fd, agent, b->sendbuf, (int)len, 0, 0);
	if (r < 0) {
		log_debug("umad_send: %s", strerror(-r));
		return -1;
	}
	return 0;
}

/* Sends what waits while the socket has room; re-arms while some is left. */
static void flush(struct umad_be *b)
{
	while (b->q_n && sock_writable(b)) {
		struct queued_mad *m = &b->q[b->q_head];
		send_now(b, m->agent, m->mad, m->len, &m->to);
		b->q_head = (b->q_head + 1) % b->q_cap;
		b->q_n--;
	}
	if (b->q_n && !evtimer_pending(b->flush_ev, NULL)) {
		struct timeval tv = { 0, FLUSH_MS * 1000 };
		evtimer_add(b->flush_ev, &tv);
	}
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

/* Doubles the ring (up to SENDQ_MAX), keeping the order. */
static int grow_queue(struct umad_be *b)
{
	uint32_t cap = b->q_cap ? 2 * b->q_cap : SENDQ_FIRST;
	if (cap > SENDQ_MAX)
		return -1;
	struct queued_mad *q = malloc(cap * sizeof(*q));
	if (!q)
		return -1;
	for (uint32_t i = 0; i < b->q_n; i++)
		q[i] = b->q[(b->q_head + i) % b->q_cap];
	free(b->q);
	b->q = q;
	b->q_cap = cap;
	b->q_head = 0;
	return 0;
}

static int enqueue(struct umad_be *b, int agent, const uint8_t *mad,
		   size_t len, const struct mad_addr *to)
{
	if (b->q_n == b->q_cap && grow_queue(b) < 0) {
		if (b->q_full++ % 1000 == 0)
			log_warn("umad2sim: %u MADs wait for room towards ibsim; refusing more (%llu so far)",
				 b->q_n, (unsigned long long)b->q_full);
		return -1;
	}
	struct queued_mad *m = &b->q[(b->q_head + b->q_n) % b->q_cap];
	m->agent = agent;
	m->to = *to;
	m->len = (uint32_t)len;
	memcpy(m->mad, mad, len);
	b->q_n++;
	flush(b);	/* arms the timer */
	return 0;
}

static int be_send(void *ctx, const uint8_t *mad, size_t len,
		   const struct mad_addr *to)
{
	struct umad_be *b = ctx;
	int agent = b->agents[mad[1]];
	if (agent < 0) {
		log_warn("no agent for class 0x%02x", mad[1]);
		return -1;
	}
	if (len > MAD_SIZE)
		return -1;
	int r;
	if (b->sim_sock >= 0 && b->q_n)
		r = enqueue(b, agent, mad, len, to);	/* keep the order */
	else if ((r = send_now(b, agent, mad, len, to)) < 0 &&
		 b->sim_sock >= 0 &&
		 (errno == EAGAIN || errno == EWOULDBLOCK || !sock_writable(b)))
		r = enqueue(b, agent, mad, len, to);	/* ibsim is not reading */
	if (r < 0)
		return -1;
	if (is_request(mad[3])) {
		b->inflight++;
		start_pumping(b);
	}
	return 0;
}

/*
 * umad2sim's data socket: AF_UNIX, bound to "\0<name>:in<pid>" and
 * connected to "\0<name>:out<client>" (umad2sim/sim_client.c); -1 when
 * there is none (the kernel, or ibsim over TCP).
 */
static int find_sim_socket(void)
{
	char in[32];
	snprintf(in, sizeof(in), ":in%d", (int)getpid());
	for (int fd = 3; fd < UMAD2SIM_FD_MIN; fd++) {
		struct sockaddr_un a;
		socklen_t al = sizeof(a);
		memset(&a, 0, sizeof(a));
		if (getsockname(fd, (struct sockaddr *)&a, &al) < 0 ||
		    a.sun_family != AF_UNIX || al <= offsetof(struct sockaddr_un, sun_path) + 1 ||
		    a.sun_path[0] != '\0')
			continue;
		/* umad2sim's address length counts a trailing NUL */
		size_t n = strnlen(a.sun_path + 1, al - offsetof(struct sockaddr_un, sun_path) - 1);
		size_t k = strlen(in);
		if (n < k || memcmp(a.sun_path + 1 + n - k, in, k))
			continue;
		struct sockaddr_un p;
		socklen_t pl = sizeof(p);
		if (getpeername(fd, (struct sockaddr *)&p, &pl) == 0)
			return fd;
	}
	return -1;
}

static void be_close(void *ctx)
{
	struct umad_be *b = ctx;
	if (!b)
		return;
	__atomic_store_n(&b->closing, 1, __ATOMIC_RELEASE);
	if (b->ev)
		event_free(b->ev);
	if (b->pump_ev)
		event_free(b->pump_ev);
	if (b->flush_ev)
		event_free(b->flush_ev);
	free(b->q);
	b->q = NULL;
	b->q_n = b->q_cap = 0;
	/* The watcher stays blocked in umad_poll; the process is ending. */
	if (b->issm_fd >= 0)
		close(b->issm_fd);
	if (b->evfd >= 0)
		close(b->evfd);
	free(b->sendbuf);
	free(b->recvbuf);
	b->sendbuf = b->recvbuf = NULL;
}

static int port_usable(const umad_port_t *p, int want_active)
{
	return p->phys_state == 5 && (!want_active || p->state == 4) &&
	       strcmp(p->link_layer, "Ethernet") != 0;
}

/* Finds the port: by GUID, by CA/port, or the first usable one. */
static int pick_port(const struct umad_port_sel *sel, char *ca, int *port,
		     char *err, size_t errlen)
{
	char names[32][UMAD_CA_NAME_LEN];
	int n = umad_get_cas_names(names, 32);
	if (n <= 0) {
		snprintf(err, errlen, "no InfiniBand device found%s%s%s",
			 sel->ca ? " (-d " : "", sel->ca ? sel->ca : "",
			 sel->ca ? " asked for)" : "");
		return -1;
	}
	if (sel->ca) {
		int known = 0;
		for (int i = 0; i < n && !known; i++)
			known = !strcmp(sel->ca, names[i]);
		if (!known) {	/* name the devices there are */
			size_t off = (size_t)snprintf(err, errlen,
				"no InfiniBand device '%s'; the devices are:", sel->ca);
			for (int i = 0; i < n && off < errlen; i++)
				off += (size_t)snprintf(err + off, errlen - off, " %s",
							names[i]);
			return -1;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			if (sel->ca && strcmp(sel->ca, names[i]))
				continue;
			umad_ca_t c;
			if (umad_get_ca(names[i], &c) < 0)
				continue;
			int found = 0;
			for (int p = 1; p <= c.numports && !found; p++) {
				umad_port_t *up = c.ports[p];
				if (!up)
					continue;
				if (sel->guid) {
					found = be64toh(up->port_guid) == sel->guid;
				} else if (sel->port) {
					found = p == sel->port;
				} else {
					found = port_usable(up, pass == 0);
				}
				if (found) {
					memcpy(ca, names[i], UMAD_CA_NAME_LEN);
					ca[UMAD_CA_NAME_LEN - 1] = '\0';
					*port = p;
				}
			}
			umad_release_ca(&c);
			if (found)
				return 0;
		}
		if (sel->guid || sel->port)
			break;
	}
	if (sel->guid)
		snprintf(err, errlen, "no local port with GUID 0x%016llx",
			 (unsigned long long)sel->guid);
	else if (sel->port)
		snprintf(err, errlen, "no port %d on %s", sel->port,
			 sel->ca ? sel->ca : "any local CA");
	else
		snprintf(err, errlen, "no local port with its physical link up%s%s",
			 sel->ca ? " on " : "", sel->ca ? sel->ca : "");
	return -1;
}

static int is_vendor_range2(uint8_t cls)
{
	return cls >= IB_VENDOR_RANGE2_START_CLASS && cls <= IB_VENDOR_RANGE2_END_CLASS;
}

static int register_one(struct umad_be *b, const struct agent_class *a)
{
	long mask[16 / sizeof(long)];
	memset(mask, 0, sizeof(mask));
	if (a->server) {
		static const uint8_t methods[] = {
			IB_MAD_METHOD_GET, IB_MAD_METHOD_SET, IB_MAD_METHOD_SEND,
			IB_MAD_METHOD_TRAP, IB_MAD_METHOD_REPORT,
			IB_MAD_METHOD_TRAP_REPRESS, IB_MAD_METHOD_GET_TABLE,
			IB_MAD_METHOD_GET_TRACE_TABLE, IB_MAD_METHOD_GETMULTI,
			IB_MAD_METHOD_DELETE,
		};
		for (size_t m = 0; m < sizeof(methods); m++)
			mask[methods[m] / (8 * sizeof(long))] |=
				1L << (methods[m] % (8 * sizeof(long)));
	}
	if (is_vendor_range2(a->cls)) {
		/* the kernel wants an OUI for these, and dispatches by it */
		uint8_t oui[3] = { (IB_OPENIB_OUI >> 16) & 0xff,
				   (IB_OPENIB_OUI >> 8) & 0xff, IB_OPENIB_OUI & 0xff };
		return umad_register_oui(b->fd, a->cls, 0, oui,
					 a->server ? mask : NULL);
	}
	return umad_register(b->fd, a->cls, a->version, 0, a->server ? mask : NULL);
}

static int register_agents(struct umad_be *b, char *err, size_t errlen)
{
	for (int i = 0; i < 256; i++)
		b->agents[i] = -1;
	for (size_t i = 0; i < sizeof(agent_classes) / sizeof(agent_classes[0]); i++) {
		const struct agent_class *a = &agent_classes[i];
		int id = register_one(b, a);
		if (id < 0) {
			if (a->server) {
				snprintf(err, errlen, "cannot register class 0x%02x: %s",
					 a->cls, strerror(-id));
				return -1;
			}
			log_info("class 0x%02x not registered: %s", a->cls,
				 strerror(-id));
			continue;
		}
		b->agents[a->cls] = id;
	}
	return 0;
}

static void fill_port_facts(struct mad_transport *t, struct umad_be *b)
{
	umad_port_t p;
	if (umad_get_port(b->ca, b->port, &p) < 0)
		return;
	t->port_guid = be64toh(p.port_guid);
	t->lid = p.base_lid;
	t->sm_lid = p.sm_lid;
	t->port_state = (int)p.state;
	t->port_num = b->port;
	snprintf(t->ca_name, sizeof(t->ca_name), "%s", b->ca);
	umad_release_port(&p);
}

void umad_transport_set_pending(struct mad_transport *t,
				int (*pending)(void *), void *arg)
{
	if (t->send != be_send)
		return;
	struct umad_be *b = t->ctx;
	b->pending = pending;
	b->pending_arg = arg;
}

int umad_transport_simulated(const struct mad_transport *t)
{
	const struct umad_be *b = t->ctx;
	return t->send == be_send && b->fd >= UMAD2SIM_FD_MIN;
}

int umad_transport_open(struct mad_transport *t, struct event_base *base,
			const struct umad_port_sel *sel, mad_recv_fn cb,
			void *cb_arg, char *err, size_t errlen)
{
	/* Lives to the end of the process: the watcher thread holds it. */
	struct umad_be *b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->fd = b->issm_fd = b->evfd = b->sim_sock = -1;
	if (umad_init() < 0) {
		snprintf(err, errlen, "cannot initialise libibumad");
		return -1;
	}
	if (pick_port(sel, b->ca, &b->port, err, errlen) < 0)
		return -1;
	b->fd = umad_open_port(b->ca, b->port);
	if (b->fd < 0) {
		snprintf(err, errlen, "cannot open %s port %d: %s", b->ca,
			 b->port, strerror(-b->fd));
		return -1;
	}
	if (register_agents(b, err, errlen) < 0)
		return -1;
	if (b->fd >= UMAD2SIM_FD_MIN) {
		b->sim_sock = find_sim_socket();
		struct timeval wait = { 0, SEND_WAIT_US };
		if (b->sim_sock >= 0 &&
		    setsockopt(b->sim_sock, SOL_SOCKET, SO_SNDTIMEO, &wait,
			       sizeof(wait)) < 0)
			b->sim_sock = -1;
		if (b->sim_sock < 0)
			log_warn("umad2sim: its socket to ibsim not found; a MAD storm may hang us (DEVELOPERS.md)");
		else
			log_info("umad2sim: socket to ibsim is fd %d; writes wait for room", b->sim_sock);
	}
	char path[256];
	int claim = sel->issm == UMAD_ISSM_CLAIM ||
		    (sel->issm == UMAD_ISSM_SIM_ONLY && b->fd >= UMAD2SIM_FD_MIN);
	if (claim && umad_get_issm_path(b->ca, b->port, path, sizeof(path)) == 0)
		b->issm_fd = open(path, O_RDWR);
	if (claim && b->issm_fd < 0)
		log_warn("cannot set IsSM on %s port %d (%s): other nodes will not see an SM here",
			 b->ca, b->port, strerror(errno));
	b->sendbuf = calloc(1, umad_size() + MAD_SIZE);
	b->recvbuf = calloc(1, umad_size() + MAD_SIZE);
	b->recv_cap = MAD_SIZE;
	b->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!b->sendbuf || !b->recvbuf || b->evfd < 0) {
		snprintf(err, errlen, "out of resources: %s", strerror(errno));
		return -1;
	}
	b->cb = cb;
	b->cb_arg = cb_arg;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->armed = 1;
	b->ev = event_new(base, b->evfd, EV_READ | EV_PERSIST, on_rx, b);
	b->pump_ev = evtimer_new(base, on_pump, b);
	b->flush_ev = evtimer_new(base, on_flush, b);
	if (!b->ev || !b->pump_ev || !b->flush_ev || event_add(b->ev, NULL) < 0) {
		snprintf(err, errlen, "cannot watch the receive queue");
		return -1;
	}
	if (pthread_create(&b->thread, NULL, watcher, b) != 0) {
		snprintf(err, errlen, "cannot start the watcher thread");
		return -1;
	}
	pthread_detach(b->thread);
	memset(t, 0, sizeof(*t));
	t->ctx = b;
	t->send = be_send;
	t->close = be_close;
	fill_port_facts(t, b);
	return 0;
}

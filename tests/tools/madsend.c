/*
 * madsend: a host that sends an SM port what it should survive.
 *
 *     madsend classes DLID [CLASS...]
 *         one Get of each class (default: every class ibsmd registers an
 *         agent for, but 0x81) to DLID, attribute 0xff23 (no ibsim handler,
 *         so the SM's port gets it), then waits 1 s and prints one line
 *         per answer and "sent=N answered=M".  Exit 0 when all were sent.
 *     madsend forge SECONDS DLID RPATH [FILE TEXT]
 *         (after FILE holds TEXT, when given) sprays forged answers for
 *         SECONDS: directed-route NodeInfo and
 *         PortInfo GetResps returned along RPATH (comma-separated ports,
 *         the return path from this host to the SM's port, as a reply
 *         takes it: its last entry is this host's port) and LID-routed
 *         ones to DLID (0: none), with TIDs 1-512 over and over and random
 *         ones, claiming to come from ibsim clients 0-2.  Prints "forged=N".
 *
 *     madsend traps COUNT SMLID SPEC...
 *         sends COUNT LID-routed Trap(Notice) MADs to SMLID as fast as
 *         they go, cycling through the SPECs, each TRAP:ISSUER (ISSUER a
 *         LID, or "self" for this host's own LID): trap 128 with another
 *         LID is a spoofed link-state change, "self" an honest one from a
 *         CA.  Reads (and drops) whatever comes back meanwhile.  Prints
 *         "traps=N" and exits 0 when all were sent.
 *     madsend silent SECONDS
 *         an IsSM port that never answers anything (it claims IsSM once
 *         its agents are registered): every MAD it gets is read and
 *         dropped for SECONDS, and "received=N" is printed at the end.
 *     madsend echo SECONDS
 *         an SA that does no work, for `make bench`'s join-storm floor:
 *         for SECONDS every SA request that reaches this port is sent
 *         back at once as its own answer (GetResp, or DeleteResp to a
 *         Delete, status 0, the record as asked); run on the SM's port
 *         after the SM stopped, so hosts still send there (it claims
 *         IsSM: ibsim gives requests only to an IsSM client).  Prints
 *         "answered=N".
 *     madsend rogue SECONDS KEY
 *         a rogue SM: an IsSM port that answers every SMInfo Get for
 *         SECONDS as MASTER at priority 15 with SM_Key KEY; prints
 *         "sminfo_gets=N".
 *     madsend smkey DLID
 *         what a host reads of an SM's SMInfo: one LID-routed SMInfo Get
 *         to DLID, carrying no SMInfo of its own; prints "sm_key=0x...
 *         state=N" (exit 0), or "no answer" (exit 1).
 *     madsend satable SECONDS SMLID RATE
 *         a host that asks the SA for every PathRecord (GetTable, no
 *         component) RATE times a second for SECONDS and never ACKs an
 *         answer; it reads what comes back and prints "sent=N busy=B
 *         other=O data=D resent=R first_resend_max_ms=G aborts=A": the
 *         answers refused Busy or with another status, the RMPP DATA
 *         segments, how many were resends, the longest wait for an
 *         answer's first resend (the SA's RMPP timeout: 200 ms), the
 *         ABORTs that ended them.
 *     madsend report DLID HEX
 *         an SA's Report(Notice) to DLID's QP1 carrying the 80 bytes of
 *         Notice HEX (160 hex digits: what ibsmd(8) NOTICES documents,
 *         e.g. a lane order), then waits 3 s at most for the
 *         ReportResp; prints "report_resp=1" (exit 0) or
 *         "report_resp=0" (exit 1).
 *     madsend rmpp-open SECONDS SMLID RATE
 *         the same rate of RMPP transfers opened and never finished:
 *         first DATA segments of a request announced as two segments;
 *         prints the same line (its stops and acks in "other").
 *     madsend sa SMLID SMKEY METHOD ATTR COMPMASK [HEX]
 *         one SA request to SMLID: METHOD and ATTR (numbers, e.g. 0x02
 *         0x0003 for an InformInfo Set), SMKEY in the SA header's SM_Key,
 *         the component mask, the record HEX (at most 200 bytes); waits
 *         1 s for the answer and prints "status=0xSSSS method=0xMM",
 *         then "record=HEX" a record: of a GetTable answer each record
 *         its first MAD holds (AttributeOffset words each; with RMPP,
 *         no more than its PayloadLength announces), of another answer
 *         the whole data (200 bytes); exit 0.  Or "no answer", exit 1
 *         (a request the SA ignores, e.g. for a wrong SM_Key).
 *
 * Runs under libumad2sim.so; it registers an agent for every class it
 * sends, because umad2sim crashes on a MAD of a class with no agent.  For
 * the same reason the spray waits for FILE (the SM's log) to say the SM
 * registered its agents: umad2sim connects a client at its first libumad
 * call, and a forged answer routed to it before then kills it whatever
 * the SM does (DEVELOPERS.md).
 */
#include <fcntl.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mad/dispatch.h"
#include "mad/sa.h"
#include "mad/smp.h"
#include "traps/notice.h"

#define ATTR_NOBODY 0xff23

static const char *after_file, *after_text;

/* ibsmd's agent classes (mad/umad.c) but 0x81, which only SMs send */
static const uint8_t covered[] = {
	0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
	0x0e, 0x0f, 0x10, 0x11, 0x12, 0x21, 0x30, 0x31, 0x32, 0x33, 0x00, 0x02,
	0x80, 0xff,
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int open_port(void)
{
	char names[8][UMAD_CA_NAME_LEN];
	if (umad_init() < 0 || umad_get_cas_names(names, 8) < 1) {
		fprintf(stderr, "madsend: no InfiniBand device\n");
		return -1;
	}
	int fd = umad_open_port(names[0], 0);
	if (fd < 0)
		fprintf(stderr, "madsend: cannot open %s\n", names[0]);
	return fd;
}

static int class_version(uint8_t cls)
{
	return cls == IB_SA_CLASS || cls == IB_CM_CLASS || cls == IB_CC_CLASS ? 2 : 1;
}

static int send_mad(int fd, int agent, void *umad, int lid, int qpn)
{
	umad_set_addr(umad, lid, qpn, 0, qpn ? IB_DEFAULT_QP1_QKEY : 0);
	return umad_send(fd, agent, umad, MAD_SIZE, 0, 0);
}

static int classes(int fd, int dlid, int n, const uint8_t *cls)
{
	int agents[256], sent = 0, answered = 0;
	void *out = calloc(1, umad_size() + MAD_SIZE);
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (!out || !in)
		return 1;
	for (int i = 0; i < n; i++) {
		agents[cls[i]] = umad_register(fd, cls[i], class_version(cls[i]), 0, NULL);
		if (agents[cls[i]] < 0) {
			fprintf(stderr, "madsend: cannot register class 0x%02x\n", cls[i]);
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		uint8_t *m = umad_get_mad(out);
		memset(m, 0, MAD_SIZE);
		m[0] = MAD_BASE_VERSION;
		m[1] = cls[i];
		m[2] = (uint8_t)class_version(cls[i]);
		m[3] = IB_MAD_METHOD_GET;
		mad_set_field64(m, 0, IB_MAD_TRID_F, 0x1000u + (unsigned)i);
		mad_set_field(m, 0, IB_MAD_ATTRID_F, ATTR_NOBODY);
		if (send_mad(fd, agents[cls[i]], out, dlid, cls[i] == IB_SMI_CLASS ? 0 : 1) == 0)
			sent++;
		else
			fprintf(stderr, "madsend: cannot send class 0x%02x\n", cls[i]);
	}
	double end = now_s() + 1.0;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 100) < 0)
			continue;
		const uint8_t *m = umad_get_mad(in);
		if (umad_status(in)) {
			printf("class 0x%02x: not delivered (status %d)\n", m[1], umad_status(in));
			continue;
		}
		answered++;
		printf("class 0x%02x: method 0x%02x status 0x%04x\n", m[1], m[3],
		       (unsigned)mad_get_field((void *)m, 0, IB_MAD_STATUS_F));
	}
	printf("sent=%d answered=%d\n", sent, answered);
	return sent == n ? 0 : 1;
}

static void forge_data(uint8_t *m, uint16_t attr, unsigned k)
{
	uint8_t *d = smp_data(m);
	if (attr == IB_ATTR_NODE_INFO) {
		mad_set_field(d, 0, IB_NODE_BASE_VERS_F, 1);
		mad_set_field(d, 0, IB_NODE_CLASS_VERS_F, 1);
		mad_set_field(d, 0, IB_NODE_TYPE_F, k & 1 ? 2 : 1);	/* switch, CA */
		mad_set_field(d, 0, IB_NODE_NPORTS_F, k & 1 ? 36 : 1);
		mad_set_field64(d, 0, IB_NODE_GUID_F, 0xbad0000000000000ULL | k);
		mad_set_field64(d, 0, IB_NODE_PORT_GUID_F, 0xbad0000000000000ULL | k);
		mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, 1);
	} else {
		mad_set_field(d, 0, IB_PORT_LID_F, 0xbad);
		mad_set_field(d, 0, IB_PORT_STATE_F, 4);
		mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, 5);
		mad_set_field(d, 0, IB_PORT_CAPMASK_F, CAP_IS_SM);
	}
}

/* Waits until file holds text (10 s at most). */
static void wait_for(const char *file, const char *text)
{
	for (int i = 0; i < 10000; i++) {
		char buf[65536];
		FILE *fp = fopen(file, "r");
		size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[n] = '\0';
		if (strstr(buf, text))
			return;
		usleep(1000);
	}
}

static int forge(int fd, double seconds, int dlid, const char *rpath)
{
	uint8_t rp[IB_SUBNET_PATH_HOPS_MAX] = { 0 };
	int hops = 0;
	for (const char *p = rpath; *p && hops + 1 < IB_SUBNET_PATH_HOPS_MAX;) {
		rp[++hops] = (uint8_t)strtoul(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	int dr = umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL);
	int lr = umad_register(fd, IB_SMI_CLASS, 1, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE);
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (dr < 0 || lr < 0 || !out || !in || !hops)
		return 1;
	srandom((unsigned)getpid());
	if (after_file)
		wait_for(after_file, after_text);
	unsigned long n = 0;
	double end = now_s() + seconds;
	for (unsigned k = 0; now_s() < end; k++) {
		uint16_t attr = k & 2 ? IB_ATTR_PORT_INFO : IB_ATTR_NODE_INFO;
		/* the first TIDs over and over (an SM counting from 1), or random */
		uint32_t tid = k & 4 ? (uint32_t)random() : (k / 8) % 512 + 1;
		uint64_t client = (uint64_t)(k % 3) << 48;
		uint8_t *m = umad_get_mad(out);
		int lid_routed = dlid && (k & 1);
		if (lid_routed)
			smp_init_lid(m, IB_MAD_METHOD_GET, attr, 0);
		else
			smp_init_dr(m, IB_MAD_METHOD_GET, attr, 0, rp, hops);
		smp_make_response(m, 0);
		if (!lid_routed)	/* the way back, as ibsim reads it */
			memcpy(m + 192, rp, sizeof(rp));
		mad_set_field64(m, 0, IB_MAD_TRID_F, client | tid);
		forge_data(m, attr, k);
		/*
		 * drain what bounced first, and a few thousand a second at
		 * most: a client that keeps sending while its own socket is
		 * full may stall ibsim's writes to it, and itself (the likely
		 * cause of a forger that never finished in one CI run)
		 */
		int len = MAD_SIZE;
		while (umad_recv(fd, in, &len, 0) >= 0)
			len = MAD_SIZE;
		if (send_mad(fd, lid_routed ? lr : dr, out, lid_routed ? dlid : 0xffff, 0) == 0)
			n++;
		usleep(200);
	}
	printf("forged=%lu\n", n);
	return 0;
}

static int own_lid(void)
{
	char names[8][UMAD_CA_NAME_LEN];
	umad_port_t p;
	if (umad_get_cas_names(names, 8) < 1 || umad_get_port(names[0], 0, &p) < 0)
		return 0;
	int lid = p.base_lid;
	umad_release_port(&p);
	return lid;
}

static int traps(int fd, long count, int smlid, int nspec, char **spec)
{
	unsigned num[32], issuer[32];
	int self = own_lid();
	if (nspec > 32)
		nspec = 32;
	for (int i = 0; i < nspec; i++) {
		char *c = strchr(spec[i], ':');
		num[i] = (unsigned)strtoul(spec[i], NULL, 0);
		issuer[i] = !c || !strcmp(c + 1, "self") ? (unsigned)self :
			    (unsigned)strtoul(c + 1, NULL, 0);
	}
	/* a class 0x01 agent gets the TrapRepresses; 0x81 so nothing crashes */
	int lr = umad_register(fd, IB_SMI_CLASS, 1, 0, NULL);
	int dr = umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE);
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (lr < 0 || dr < 0 || !out || !in || nspec < 1)
		return 1;
	long n = 0, back = 0;
	for (long k = 0; k < count; k++) {
		int i = (int)(k % nspec);
		uint8_t *m = umad_get_mad(out);
		smp_init_lid(m, IB_MAD_METHOD_TRAP, MAD_ATTR_NOTICE, 0);
		mad_set_field64(m, 0, IB_MAD_TRID_F, 0x7000000000ULL + (uint64_t)k);
		uint8_t *d = smp_data(m);
		mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
		mad_set_field(d, 0, IB_NOTICE_TYPE_F, num[i] >= 256 ? 1 : 4);	/* urgent / info */
		mad_set_field(d, 0, IB_NOTICE_PRODUCER_F, num[i] == 128 ? 2 : 1);
		mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, num[i]);
		mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, issuer[i]);
		mad_set_field(d, 0, IB_NOTICE_COUNT_F, (unsigned)(k & 0x7fff));
		if (num[i] == 144) {
			mad_set_field(d, 0, IB_NOTICE_DATA_144_LID_F, issuer[i]);
			mad_set_field(d, 0, IB_NOTICE_DATA_144_CAPMASK_F, 0x2000);
		} else {
			mad_set_field(d, 0, IB_NOTICE_DATA_LID_F, issuer[i]);
		}
		if (send_mad(fd, lr, out, smlid, 0) == 0)
			n++;
		int len = MAD_SIZE;
		while (umad_recv(fd, in, &len, 0) >= 0) {
			back++;
			len = MAD_SIZE;
		}
	}
	/* ibsim drops what a client that left had still queued: stay a while */
	double end = now_s() + 2.0;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 100) >= 0)
			back++;
	}
	printf("traps=%ld back=%ld\n", n, back);
	return n == count ? 0 : 1;
}

/* claim IsSM on the first port (after the agents exist: see silent()) */
static int claim_issm(void)
{
	char names[8][UMAD_CA_NAME_LEN], path[256];
	if (umad_get_cas_names(names, 8) < 1 ||
	    umad_get_issm_path(names[0], 1, path, sizeof(path)) < 0 ||
	    open(path, O_RDWR) < 0) {
		fprintf(stderr, "madsend: cannot claim IsSM\n");
		return -1;
	}
	return 0;
}

/*
 * An SM port's agents (every class ibsmd may send to an IsSM port, or
 * umad2sim crashes; the SA's a server of its request methods when
 * sa_server: requests reach only an agent whose mask has their method),
 * then IsSM -- only now, after the agents (as ibsmd does): with
 * SIM_SET_ISSM=1 the port is IsSM from umad2sim's first call, ibsim
 * sends trap 144 at once, and an SM's SMInfo Get could arrive before an
 * agent exists and crash umad2sim's receiver thread.  ibsim hands a
 * request on QP 1 only to an IsSM client.  The SA agent, or -1.
 */
static int sm_port(int fd, int sa_server)
{
	static const uint8_t cls[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS };
	static const uint8_t methods[] = { 0x01, 0x02, 0x12, 0x14, 0x15 };
	long mask[16 / sizeof(long)] = { 0 };
	int agent = -1;
	for (size_t i = 0; i < sizeof(methods); i++)
		mask[methods[i] / (8 * sizeof(long))] |= 1L << (methods[i] % (8 * sizeof(long)));
	for (size_t i = 0; i < sizeof(cls); i++)
		if ((agent = umad_register(fd, cls[i], class_version(cls[i]), 0,
					   sa_server && cls[i] == IB_SA_CLASS ? mask : NULL)) < 0)
			return -1;
	return claim_issm() < 0 ? -1 : agent;
}

static int silent(int fd, double seconds)
{
	if (sm_port(fd, 0) < 0)
		return 1;
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (!in)
		return 1;
	long got = 0;
	double end = now_s() + seconds;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 100) >= 0)
			got++;
	}
	printf("received=%ld\n", got);
	return 0;
}

/*
 * An SM port serving for SECONDS: answer() turns each MAD received into
 * its answer in place (returns 0 to leave it unanswered); the answers
 * sent are counted into *sent.
 */
static int serve(int fd, double seconds, int sa_server,
		 int (*answer)(void *umad, uint8_t *m, int len, void *arg), void *arg,
		 long *sent)
{
	int agent = sm_port(fd, sa_server);
	if (agent < 0)
		return 1;
	void *in = calloc(1, umad_size() + MAD_SIZE);
	if (!in)
		return 1;
	uint8_t *m = umad_get_mad(in);
	double end = now_s() + seconds;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 100) >= 0 && answer(in, m, len, arg) &&
		    umad_send(fd, agent, in, len, 0, 0) == 0)
			(*sent)++;
	}
	free(in);
	return 0;
}

static int echo_answer(void *umad, uint8_t *m, int len, void *arg)
{
	if (len < 24 || m[1] != IB_SA_CLASS || (m[3] & 0x80))
		return 0;
	m[3] = m[3] == 0x15 ? 0x95 : 0x81;	/* DeleteResp or GetResp */
	m[4] = m[5] = 0;			/* status */
	return 1;
}

static int echo(int fd, double seconds)
{
	long answered = 0;
	if (serve(fd, seconds, 1, echo_answer, NULL, &answered))
		return 1;
	printf("answered=%ld\n", answered);
	return 0;
}

struct rogue_sm {
	uint64_t guid, key;
	long gets;
};

static int rogue_answer(void *umad, uint8_t *m, int len, void *arg)
{
	struct rogue_sm *r = arg;
	if (len < MAD_SIZE || smp_attr(m) != IB_ATTR_SMINFO || smp_method(m) != IB_MAD_METHOD_GET)
		return 0;
	struct smp_sminfo me = { .guid = r->guid, .sm_key = r->key, .priority = 15,
				 .state = SMS_MASTER, .act_count = (uint32_t)r->gets++ };
	smp_encode_sminfo(smp_data(m), &me);
	smp_make_response(m, 0);
	/* a directed-route answer goes back by its path: permissive DLID */
	if (smp_class(m) == IB_SMI_DIRECT_CLASS)
		umad_set_addr(umad, 0xffff, 0, 0, 0);
	return 1;
}

static int rogue(int fd, double seconds, uint64_t key)
{
	struct rogue_sm r = { .key = key };
	char names[8][UMAD_CA_NAME_LEN];
	umad_port_t port;
	if (umad_get_cas_names(names, 8) >= 1 && umad_get_port(names[0], 1, &port) == 0) {
		r.guid = be64toh(port.port_guid);
		umad_release_port(&port);
	}
	long sent = 0;
	if (serve(fd, seconds, 0, rogue_answer, &r, &sent))
		return 1;
	printf("sminfo_gets=%ld\n", r.gets);
	return 0;
}

static int smkey(int fd, int dlid)
{
	int agent = umad_register(fd, IB_SMI_CLASS, 1, 0, NULL);
	if (agent < 0 || umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL) < 0)
		return 1;
	void *out = calloc(1, umad_size() + MAD_SIZE), *in = calloc(1, umad_size() + MAD_SIZE);
	if (!out || !in)
		return 1;
	uint8_t *m = umad_get_mad(out), *r = umad_get_mad(in);
	smp_init_lid(m, IB_MAD_METHOD_GET, IB_ATTR_SMINFO, 0);
	uint64_t tid = (uint64_t)getpid() << 16 | 0x5e;
	mad_set_field64(m, 0, IB_MAD_TRID_F, tid);
	if (send_mad(fd, agent, out, dlid, 0) < 0)
		return 1;
	double end = now_s() + 5;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 200) < 0 || len < MAD_SIZE ||
		    !(r[3] & IB_MAD_RESPONSE) || smp_attr(r) != IB_ATTR_SMINFO ||
		    (uint32_t)mad_get_field64(r, 0, IB_MAD_TRID_F) != (uint32_t)tid)
			continue;	/* the SM's own SMInfo Get to us goes unanswered;
					 * the TID's upper half is the agent's */
		struct smp_sminfo s;
		smp_decode_sminfo(smp_data(r), &s);
		printf("sm_key=0x%016llx state=%d\n", (unsigned long long)s.sm_key, s.state);
		return 0;
	}
	printf("no answer\n");
	return 1;
}

/* One Notice (raw, NOTICE_SIZE) as a Report to dlid, answered or not. */
static int report(int fd, int dlid, const uint8_t *raw)
{
	int agent = umad_register(fd, IB_SA_CLASS, SA_CLASS_VERSION, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE), *in = calloc(1, umad_size() + MAD_SIZE);
	if (agent < 0 || !out || !in)
		return 1;
	uint64_t tid = (uint64_t)getpid() << 8 | 0x1a;
	sa_init_request(umad_get_mad(out), SA_METHOD_REPORT, tid, SA_ATTR_NOTICE,
			0, 0, raw, NOTICE_SIZE);
	if (send_mad(fd, agent, out, dlid, 1) < 0)
		return 1;
	const uint8_t *r = umad_get_mad(in);
	double end = now_s() + 3;
	while (now_s() < end) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 200) < 0 || umad_status(in) ||
		    mad_method(r) != SA_METHOD_REPORT_RESP ||
		    (uint32_t)mad_tid(r) != (uint32_t)tid)
			continue;
		printf("report_resp=1\n");
		return 0;
	}
	printf("report_resp=0\n");
	return 1;
}

/* The SA flood's counts (satable, rmpp-open). */
#define FLOOD_TIDS 1000000
struct flood_counts {
	long sent, busy, other, data, resent, aborts;
	double first_resend_max_ms;
	double *first;		/* per TID: the first DATA segment 1, 0: none */
	unsigned char *seen;	/* per TID: segment 1 arrivals */
};

static void flood_take(struct flood_counts *c, const uint8_t *m, int len)
{
	if (len < 56 || m[1] != IB_SA_CLASS)
		return;
	if (!(m[26] & 0x01)) {		/* no RMPP: one MAD, a status */
		if (mad_get_field((void *)m, 0, IB_MAD_STATUS_F) == 1)
			c->busy++;
		else
			c->other++;
		return;
	}
	uint32_t tid = (uint32_t)mad_get_field64((void *)m, 0, IB_MAD_TRID_F);
	uint32_t seg = (uint32_t)m[28] << 24 | (uint32_t)m[29] << 16 | (uint32_t)m[30] << 8 | m[31];
	if (m[25] == 4) {		/* ABORT */
		c->aborts++;
		return;
	}
	if (m[25] != 1) {		/* ACK, STOP */
		c->other++;
		return;
	}
	c->data++;
	if (seg != 1 || tid >= FLOOD_TIDS)
		return;
	if (c->seen[tid]++) {
		c->resent++;
		double gap = (now_s() - c->first[tid]) * 1e3;
		if (c->seen[tid] == 2 && gap > c->first_resend_max_ms)
			c->first_resend_max_ms = gap;
	} else {
		c->first[tid] = now_s();
	}
}

static int sa_flood(int fd, double seconds, int smlid, double rate, int open_rmpp)
{
	int agent = umad_register(fd, IB_SA_CLASS, 2, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE);
	void *in = calloc(1, umad_size() + MAD_SIZE);
	struct flood_counts c = { 0 };
	c.first = calloc(FLOOD_TIDS, sizeof(*c.first));
	c.seen = calloc(FLOOD_TIDS, 1);
	if (agent < 0 || !out || !in || !c.first || !c.seen || rate <= 0)
		return 1;
	double t0 = now_s(), end = t0 + seconds;
	long tid = 0;
	while (now_s() < end) {
		/* keep to the rate; read what came meanwhile */
		while (tid < (long)((now_s() - t0) * rate) && tid + 1 < FLOOD_TIDS) {
			uint8_t *m = umad_get_mad(out);
			memset(m, 0, MAD_SIZE);
			m[0] = MAD_BASE_VERSION;
			m[1] = IB_SA_CLASS;
			m[2] = 2;
			m[3] = IB_MAD_METHOD_GET_TABLE;
			mad_set_field64(m, 0, IB_MAD_TRID_F, (uint64_t)++tid);
			mad_set_field(m, 0, IB_MAD_ATTRID_F, open_rmpp ? 0x11 : 0x35);
			if (open_rmpp) {	/* DATA, First, two segments announced */
				m[24] = 1;
				m[25] = 1;
				m[26] = 0x1f << 3 | 0x01 | 0x02;
				m[31] = 1;
				m[35] = 2 * 220 & 0xff;
				m[34] = 2 * 220 >> 8;
			}
			if (send_mad(fd, agent, out, smlid, 1) == 0)
				c.sent++;
		}
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 1) >= 0)
			flood_take(&c, umad_get_mad(in), len);
	}
	/* the last answers' resends and ABORTs */
	double stop = now_s() + 1.5;
	while (now_s() < stop) {
		int len = MAD_SIZE;
		if (umad_recv(fd, in, &len, 50) >= 0)
			flood_take(&c, umad_get_mad(in), len);
	}
	printf("sent=%ld busy=%ld other=%ld data=%ld resent=%ld first_resend_max_ms=%.0f aborts=%ld\n",
	       c.sent, c.busy, c.other, c.data, c.resent, c.first_resend_max_ms, c.aborts);
	return 0;
}

/* One SA request (madsend sa); the answer's status and first record. */
static int sa_request(int fd, int smlid, uint64_t key, uint8_t method, uint16_t attr,
		      uint64_t comp_mask, const uint8_t *rec, size_t len)
{
	int agent = umad_register(fd, IB_SA_CLASS, SA_CLASS_VERSION, 0, NULL);
	void *out = calloc(1, umad_size() + MAD_SIZE), *in = calloc(1, umad_size() + MAD_SIZE);
	if (agent < 0 || !out || !in)
		return 2;
	uint8_t *m = umad_get_mad(out);
	uint64_t tid = (uint64_t)getpid() << 8 | 0x5a;
	sa_init_request(m, method, tid, attr, 0, comp_mask, rec, len);
	sa_put64(m + 36, key);
	if (send_mad(fd, agent, out, smlid, 1) < 0)
		return 2;
	const uint8_t *r = umad_get_mad(in);
	double end = now_s() + 1;
	while (now_s() < end) {
		int got = MAD_SIZE;
		if (umad_recv(fd, in, &got, 100) < 0 || umad_status(in) || got < SA_HDR_SIZE ||
		    !(mad_method(r) & IB_MAD_RESPONSE) || (uint32_t)mad_tid(r) != (uint32_t)tid)
			continue;
		printf("status=0x%04x method=0x%02x\n", (unsigned)sa_get16(r + 4), mad_method(r));
		size_t data = (size_t)got - SA_HDR_SIZE, size = data;
		if (mad_method(r) == SA_METHOD_GET_TABLE_RESP) {
			size = (size_t)sa_attr_offset(r) * 8;
			/* the first segment's PayloadLength counts the SA header's 20 bytes */
			if ((r[26] & 0x01) && rmpp_seg(r) == 1 && rmpp_len(r) >= 20 &&
			    rmpp_len(r) - 20 < data)
				data = rmpp_len(r) - 20;
		}
		for (size_t at = 0; size && at + size <= data; at += size) {
			fputs("record=", stdout);
			for (size_t i = 0; i < size; i++)
				printf("%02x", sa_data(r)[at + i]);
			putchar('\n');
		}
		return 0;
	}
	printf("no answer\n");
	return 1;
}

/* HEX into buf (at most max bytes); the byte count, or -1. */
static int parse_hex(const char *hex, uint8_t *buf, int max)
{
	int used = 0, n = 0;
	while (hex[used] && n < max) {
		unsigned v;
		int k;
		if (sscanf(hex + used, "%2x%n", &v, &k) != 1 || k != 2)
			return -1;
		buf[n++] = (uint8_t)v;
		used += k;
	}
	return hex[used] ? -1 : n;
}

int main(int argc, char **argv)
{
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "sa")) {
		uint8_t rec[SA_DATA_SIZE] = { 0 };
		int len = argc == 8 ? parse_hex(argv[7], rec, SA_DATA_SIZE) : 0;
		if (len < 0) {
			fprintf(stderr, "madsend sa: HEX must be at most %d bytes of hex digits\n",
				SA_DATA_SIZE);
			return 2;
		}
		int fd = open_port();
		return fd < 0 ? 2 : sa_request(fd, atoi(argv[2]), strtoull(argv[3], NULL, 0),
					       (uint8_t)strtoul(argv[4], NULL, 0),
					       (uint16_t)strtoul(argv[5], NULL, 0),
					       strtoull(argv[6], NULL, 0), rec, (size_t)len);
	}
	if (argc == 5 && (!strcmp(argv[1], "satable") || !strcmp(argv[1], "rmpp-open"))) {
		int fd = open_port();
		return fd < 0 ? 1 : sa_flood(fd, atof(argv[2]), atoi(argv[3]), atof(argv[4]),
					     !strcmp(argv[1], "rmpp-open"));
	}
	if (argc == 4 && !strcmp(argv[1], "rogue")) {
		int fd = open_port();
		return fd < 0 ? 1 : rogue(fd, atof(argv[2]), strtoull(argv[3], NULL, 0));
	}
	if (argc == 3 && !strcmp(argv[1], "smkey")) {
		int fd = open_port();
		return fd < 0 ? 1 : smkey(fd, atoi(argv[2]));
	}
	if (argc >= 5 && !strcmp(argv[1], "traps")) {
		int fd = open_port();
		return fd < 0 ? 1 : traps(fd, atol(argv[2]), atoi(argv[3]),
					  argc - 4, argv + 4);
	}
	if (argc == 4 && !strcmp(argv[1], "report")) {
		uint8_t raw[NOTICE_SIZE];
		if (parse_hex(argv[3], raw, NOTICE_SIZE) != NOTICE_SIZE) {
			fprintf(stderr, "madsend report: HEX must be %d hex digits\n",
				2 * NOTICE_SIZE);
			return 2;
		}
		int fd = open_port();
		return fd < 0 ? 1 : report(fd, atoi(argv[2]), raw);
	}
	if (argc == 3 && !strcmp(argv[1], "silent")) {
		int fd = open_port();
		return fd < 0 ? 1 : silent(fd, atof(argv[2]));
	}
	if (argc == 3 && !strcmp(argv[1], "echo")) {
		int fd = open_port();
		return fd < 0 ? 1 : echo(fd, atof(argv[2]));
	}
	if (argc >= 3 && !strcmp(argv[1], "classes")) {
		uint8_t list[256];
		int n = 0;
		for (int i = 3; i < argc && n < 256; i++)
			list[n++] = (uint8_t)strtoul(argv[i], NULL, 0);
		if (!n) {
			memcpy(list, covered, sizeof(covered));
			n = (int)sizeof(covered);
		}
		int fd = open_port();
		return fd < 0 ? 1 : classes(fd, atoi(argv[2]), n, list);
	}
	if ((argc == 5 || argc == 7) && !strcmp(argv[1], "forge")) {
		if (argc == 7) {
			after_file = argv[5];
			after_text = argv[6];
		}
		int fd = open_port();
		return fd < 0 ? 1 : forge(fd, atof(argv[2]), atoi(argv[3]), argv[4]);
	}
	fprintf(stderr, "usage: madsend classes DLID [CLASS...]\n"
			"       madsend forge SECONDS DLID RPATH [FILE TEXT]\n"
			"       madsend traps COUNT SMLID TRAP:ISSUER...\n"
			"       madsend silent SECONDS\n"
			"       madsend echo SECONDS\n"
			"       madsend rogue SECONDS KEY\n"
			"       madsend smkey DLID\n"
			"       madsend report DLID HEX\n"
			"       madsend satable SECONDS SMLID RATE\n"
			"       madsend rmpp-open SECONDS SMLID RATE\n"
			"       madsend sa SMLID SMKEY METHOD ATTR COMPMASK [HEX]\n");
	return 2;
}

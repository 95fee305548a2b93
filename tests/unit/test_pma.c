/*
 * The PerfMgt codec (mad/pma.c) against the emulator's PMA
 * (mad/emu/emu_pma.c), two codecs written apart (libibmad's field tables
 * there, the specification's byte offsets here): known answers for
 * ClassPortInfo, PortCounters (Get and the clearing Set) and
 * PortCountersExtended; then every decoder fed every truncation of a
 * valid answer, random bytes and bit-flipped valid answers.  Each input
 * is placed right before an inaccessible page, so a read past its length
 * faults whoever reads it (libibmad is not built with ASan); every
 * refusal must carry a reason.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mad/emu/emu.h"
#include "mad/pma.h"

#include "emu_testlib.h"

#define SW_GUID 0x100		/* leaf L0 */
#define SW_PORT 7		/* its link to spine S0 */
#define CA_NODE 0x1008		/* host H2 */
#define ASKER 1			/* the host that sends the requests: H1 */

/* the answers a fuzz round starts from */
enum { A_CPI, A_PC, A_PC_CLEAR, A_EXT, N_ANSWERS };

struct asker {
	struct emu_net net;
	struct mad_transport t;
	uint8_t answer[MAD_SIZE];
	size_t len;
	int got;
};

static void asker_recv(void *arg, const uint8_t *mad, size_t len,
		       const struct mad_addr *from, int status)
{
	struct asker *a = arg;
	(void)from;
	ck_assert_int_eq(status, 0);
	ck_assert_uint_le(len, MAD_SIZE);
	memcpy(a->answer, mad, len);
	a->len = len;
	a->got = 1;
}

/* The fabric of emu_testlib.h brought up; H1 attached as a plain host. */
static void asker_open(struct asker *a)
{
	char err[256] = "";
	memset(a, 0, sizeof(*a));
	emu_net_up(&a->net);
	ck_assert_msg(emu_attach(a->net.e, a->net.base, emu_host_guid(ASKER),
				 &a->t, asker_recv, a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(emu_set_issm(a->net.e, emu_host_guid(ASKER), 0), 0);
}

static void asker_close(struct asker *a)
{
	ck_assert_uint_eq(emu_violations(a->net.e), 0);
	a->t.close(a->t.ctx);
	emu_net_down(&a->net);
}

/* Sends the request in mad to to and waits for its answer (asserted). */
static void ask(struct asker *a, const uint8_t *mad, const struct mad_addr *to)
{
	a->got = 0;
	ck_assert_int_eq(a->t.send(a->t.ctx, mad, MAD_SIZE, to), 0);
	ck_assert_msg(emu_run_until(a->net.base, &a->got, 2000), "no answer");
	ck_assert_uint_eq(a->len, MAD_SIZE);
}

static uint32_t lid_of(const struct asker *a, uint64_t guid, int port)
{
	int lid = emu_port_lid(a->net.e, guid, port);
	ck_assert_int_gt(lid, 0);
	return (uint32_t)lid;
}

/* A distinct value for each counter, some past their widths. */
static uint64_t planted(int c)
{
	static const uint64_t v[PMC_N] = {
		[PMC_SYMBOL_ERR] = 70000,	/* past 16 bits: 65535 */
		[PMC_LINK_ERR_RECOVERY] = 17,
		[PMC_LINK_DOWNED] = 300,	/* past 8 bits: 255 */
		[PMC_RCV_ERR] = 0x1234,
		[PMC_RCV_REMOTE_PHYS_ERR] = 0x2345,
		[PMC_RCV_SWITCH_RELAY_ERR] = 0x3456,
		[PMC_XMIT_DISCARDS] = 0x4567,
		[PMC_XMIT_CONSTRAINT_ERR] = 0x56,
		[PMC_RCV_CONSTRAINT_ERR] = 0x67,
		[PMC_LOCAL_LINK_INTEGRITY_ERR] = 0xa,
		[PMC_EXCESSIVE_BUF_OVERRUN_ERR] = 0x5,
		[PMC_VL15_DROPPED] = 0x789a,
		[PMC_XMIT_WAIT] = 0x89abcdef,
		[PMC_XMIT_DATA] = 0x0102030405060708ull,	/* 32-bit: saturated */
		[PMC_RCV_DATA] = 0xfffffffeull,
		[PMC_XMIT_PKTS] = 0x100000000ull,		/* 32-bit: saturated */
		[PMC_RCV_PKTS] = 12345,
	};
	return v[c];
}

/* What PortCounters shows of planted(c): stopped at the field's width. */
static uint64_t shown(int c)
{
	unsigned bits = pma_counter_info[c].bits;
	uint64_t max = (1ull << bits) - 1;
	return planted(c) > max ? max : planted(c);
}

static void plant(struct asker *a, uint64_t guid, int port)
{
	for (int c = 0; c < PMC_N; c++)
		ck_assert_int_eq(emu_set_port_counter(a->net.e, guid, port, c,
						      planted(c)), 0);
}

/*
 * Asks the PMA at lid for port's counters: ClassPortInfo, PortCounters,
 * the clearing Set, PortCountersExtended; the answers in out (NULL: not kept).
 */
static void collect(struct asker *a, uint32_t lid, uint8_t port,
		    uint8_t out[N_ANSWERS][MAD_SIZE])
{
	uint8_t req[MAD_SIZE];
	struct mad_addr to;
	pma_cpi_get(req, lid, &to);
	ask(a, req, &to);
	memcpy(out[A_CPI], a->answer, MAD_SIZE);
	pma_pc_get(req, port, lid, &to);
	ask(a, req, &to);
	memcpy(out[A_PC], a->answer, MAD_SIZE);
	pma_ext_get(req, port, lid, &to);
	ask(a, req, &to);
	memcpy(out[A_EXT], a->answer, MAD_SIZE);
	pma_pc_clear(req, port, PMA_PC_SELECT_ALL, lid, &to);
	ask(a, req, &to);
	memcpy(out[A_PC_CLEAR], a->answer, MAD_SIZE);
}

/*
 * Known answers: the emulator's encoding read by mad/pma.c, at a switch
 * port and a CA port, through ClassPortInfo, PortCounters (every
 * counter, saturated where wider than its field), PortCountersExtended
 * (64-bit) and the clear.
 */
START_TEST(known_answers)
{
	struct asker a;
	asker_open(&a);
	const struct { uint64_t guid; int port; uint32_t lid; } at[2] = {
		{ SW_GUID, SW_PORT, lid_of(&a, SW_GUID, 0) },
		{ CA_NODE, 1, lid_of(&a, CA_NODE, 1) },
	};
	for (int k = 0; k < 2; k++) {
		uint8_t ans[N_ANSWERS][MAD_SIZE];
		char err[160] = "";
		uint8_t port = (uint8_t)at[k].port;
		plant(&a, at[k].guid, at[k].port);
		uint64_t before = emu_pma_gets(a.net.e);
		collect(&a, at[k].lid, port, ans);
		ck_assert_uint_eq(emu_pma_gets(a.net.e) - before, 4);

		struct pma_cpi cpi;
		memset(&cpi, 0xff, sizeof(cpi));
		ck_assert_msg(pma_cpi_decode(ans[A_CPI], MAD_SIZE, &cpi, err,
					     sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(cpi.capmask, PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT);
		ck_assert_uint_eq(cpi.capmask2, 0);
		ck_assert_uint_eq(cpi.resp_time, 18);
		ck_assert_uint_eq(cpi.redirect_lid, 0);
		ck_assert_uint_eq(cpi.redirect_qp, 0);

		/* PortCounters: every counter, wide bits cleared */
		struct pma_sample s;
		memset(&s, 0, sizeof(s));
		s.wide = ~0u;
		ck_assert_msg(pma_pc_decode(ans[A_PC], MAD_SIZE, port, &s, err,
					    sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(s.port_select, port);
		ck_assert_uint_eq(s.have, (1u << PMC_N) - 1);
		ck_assert_uint_eq(s.wide & ((1u << PMC_N) - 1), 0);
		for (int c = 0; c < PMC_N; c++)
			ck_assert_msg(s.v[c] == shown(c), "%s: %llu, planted %llu shows %llu",
				      pma_counter_info[c].name, (unsigned long long)s.v[c],
				      (unsigned long long)planted(c),
				      (unsigned long long)shown(c));

		/* PortCountersExtended over it: the four 64-bit, the rest kept */
		ck_assert_msg(pma_ext_decode_sample(ans[A_EXT], MAD_SIZE, port, &s,
						    err, sizeof(err)) == 0, "%s", err);
		for (int c = 0; c < PMC_N; c++) {
			int ext = c >= PMC_XMIT_DATA;
			ck_assert_uint_eq(s.v[c], ext ? planted(c) : shown(c));
			ck_assert_uint_eq(!!(s.wide & 1u << c), ext);
		}
		ck_assert_uint_eq(s.have, (1u << PMC_N) - 1);

		/* the Set's answer shows every counter cleared, so does a Get */
		ck_assert_msg(pma_pc_decode(ans[A_PC_CLEAR], MAD_SIZE, port, &s, err,
					    sizeof(err)) == 0, "%s", err);
		for (int c = 0; c < PMC_N; c++)
			ck_assert_msg(s.v[c] == 0, "%s not cleared", pma_counter_info[c].name);
		uint8_t req[MAD_SIZE];
		struct mad_addr to;
		pma_ext_get(req, port, at[k].lid, &to);
		ask(&a, req, &to);
		ck_assert_msg(pma_ext_decode_sample(a.answer, MAD_SIZE, port, &s, err,
						    sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(s.v[PMC_XMIT_DATA], 0);
		ck_assert_uint_eq(s.v[PMC_RCV_PKTS], 0);
	}
	asker_close(&a);
}
END_TEST

/*
 * A PMA without PortCountersExtended and PortXmitWait (its capability
 * mask): the extended Get is refused with its status, PortXmitWait reads
 * 0; a clear with only some counters selected clears only those; another
 * port than asked, or a port the CA does not have, is refused.
 */
START_TEST(capmask_and_select)
{
	struct asker a;
	asker_open(&a);
	uint32_t lid = lid_of(&a, SW_GUID, 0);
	char err[160] = "";
	uint8_t req[MAD_SIZE];
	struct mad_addr to;
	struct pma_sample s;
	plant(&a, SW_GUID, SW_PORT);
	ck_assert_int_eq(emu_set_pma_capmask(a.net.e, SW_GUID, 0), 0);
	ck_assert_int_eq(emu_set_pma_capmask(a.net.e, 0xdead, 0), -1);

	struct pma_cpi cpi;
	pma_cpi_get(req, lid, &to);
	ask(&a, req, &to);
	ck_assert_int_eq(pma_cpi_decode(a.answer, MAD_SIZE, &cpi, err, sizeof(err)), 0);
	ck_assert_uint_eq(cpi.capmask, 0);

	pma_ext_get(req, SW_PORT, lid, &to);
	ask(&a, req, &to);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pma_ext_decode_sample(a.answer, MAD_SIZE, SW_PORT, &s, err,
					       sizeof(err)), -1);
	ck_assert_msg(strstr(err, "status 0x000c") != NULL, "%s", err);
	ck_assert_uint_eq(s.have, 0);	/* untouched */

	pma_pc_get(req, SW_PORT, lid, &to);
	ask(&a, req, &to);
	ck_assert_int_eq(pma_pc_decode(a.answer, MAD_SIZE, SW_PORT, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.v[PMC_XMIT_WAIT], 0);
	ck_assert_uint_eq(s.v[PMC_SYMBOL_ERR], 65535);

	/* a Set selecting SymbolErrorCounter and PortRcvData only (bits 0, 13) */
	pma_pc_clear(req, SW_PORT, PMA_PC_SELECT_ALL, lid, &to);
	req[64 + 2] = 0x20;
	req[64 + 3] = 0x01;
	req[64 + 18] = 0;
	ask(&a, req, &to);
	ck_assert_int_eq(pma_pc_decode(a.answer, MAD_SIZE, SW_PORT, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(emu_set_pma_capmask(a.net.e, SW_GUID, PMA_CAP_XMIT_WAIT), 0);
	pma_pc_get(req, SW_PORT, lid, &to);
	ask(&a, req, &to);
	ck_assert_int_eq(pma_pc_decode(a.answer, MAD_SIZE, SW_PORT, &s, err, sizeof(err)), 0);
	for (int c = 0; c < PMC_N; c++) {
		uint64_t want = c == PMC_SYMBOL_ERR || c == PMC_RCV_DATA ? 0 : shown(c);
		ck_assert_msg(s.v[c] == want, "%s: %llu", pma_counter_info[c].name,
			      (unsigned long long)s.v[c]);
	}

	/* the answer names port 7, we asked for 6 */
	ck_assert_int_eq(pma_pc_decode(a.answer, MAD_SIZE, SW_PORT - 1, &s, err,
				       sizeof(err)), -1);
	ck_assert_msg(strstr(err, "port 7") != NULL, "%s", err);
	/* H2 has no port 2: the PMA says so with a status */
	pma_pc_get(req, 2, lid_of(&a, CA_NODE, 1), &to);
	ask(&a, req, &to);
	ck_assert_int_eq(pma_pc_decode(a.answer, MAD_SIZE, 2, &s, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "status 0x001c") != NULL, "%s", err);
	asker_close(&a);
}
END_TEST

/* ---- the fuzzing ---- */

/* Calls decoder d on len bytes ending right before an inaccessible page. */
struct fence {
	uint8_t *page;		/* two pages, the second PROT_NONE */
	long size;
};

static void fence_open(struct fence *f)
{
	f->size = sysconf(_SC_PAGESIZE);
	f->page = mmap(NULL, (size_t)(2 * f->size), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(f->page, MAP_FAILED);
	ck_assert_int_eq(mprotect(f->page + f->size, (size_t)f->size, PROT_NONE), 0);
}

static void fence_close(struct fence *f)
{
	munmap(f->page, (size_t)(2 * f->size));
}

enum { D_CPI, D_PC, D_EXT, D_EXT_SAMPLE, N_DECODERS };
static const char *const decoder_name[N_DECODERS] = {
	"pma_cpi_decode", "pma_pc_decode", "pma_ext_decode", "pma_ext_decode_sample"
};

struct outcome {
	int rc;
	struct pma_cpi cpi;
	struct pma_counters_ext ext;
	struct pma_sample s;
};

/*
 * Decoder d on in[0..len) (copied before the fence).  The contract (0 or
 * -1, a reason with every -1) is checked without Check's assertions,
 * which cost a message to the parent each under CK_FORK: the first
 * breach is kept in bad.
 */
static char bad[256];

static void decode(struct fence *f, int d, const uint8_t *in, size_t len,
		   uint8_t port, struct outcome *o)
{
	uint8_t *m = f->page + f->size - len;
	char err[160];
	memcpy(m, in, len);
	err[0] = 0;
	memset(o, 0, sizeof(*o));
	switch (d) {
	case D_CPI:
		o->rc = pma_cpi_decode(m, len, &o->cpi, err, sizeof(err));
		break;
	case D_PC:
		o->rc = pma_pc_decode(m, len, port, &o->s, err, sizeof(err));
		break;
	case D_EXT:
		o->rc = pma_ext_decode(m, len, port, &o->ext, err, sizeof(err));
		break;
	default:
		o->rc = pma_ext_decode_sample(m, len, port, &o->s, err, sizeof(err));
	}
	if (bad[0])
		return;
	if (o->rc != 0 && o->rc != -1)
		snprintf(bad, sizeof(bad), "%s returned %d", decoder_name[d], o->rc);
	else if (o->rc && (!err[0] || !memchr(err, 0, sizeof(err))))
		snprintf(bad, sizeof(bad), "%s refused %zu bytes without a reason",
			 decoder_name[d], len);
}

/* The decoder meant for answer k (A_PC_CLEAR: PortCounters too). */
static int decoder_of(int k)
{
	return k == A_CPI ? D_CPI : k == A_EXT ? D_EXT : D_PC;
}

/* Fresh valid answers from the emulator, at the switch port. */
static void valid_answers(uint8_t ans[N_ANSWERS][MAD_SIZE])
{
	struct asker a;
	asker_open(&a);
	plant(&a, SW_GUID, SW_PORT);
	collect(&a, lid_of(&a, SW_GUID, 0), SW_PORT, ans);
	asker_close(&a);
}

/*
 * Every decoder, every answer, every length 0..MAD_SIZE: the decoder
 * meant for the answer accepts exactly the lengths that hold its fields,
 * and then reads what it reads from the whole answer; the others refuse
 * at every length.  Nothing reads past the length (the fence).
 */
START_TEST(truncations)
{
	static const size_t need[N_DECODERS] = { 104, 108, 104, 104 };
	uint8_t ans[N_ANSWERS][MAD_SIZE];
	struct fence f;
	valid_answers(ans);
	fence_open(&f);
	for (int k = 0; k < N_ANSWERS; k++) {
		for (int d = 0; d < N_DECODERS; d++) {
			int meant = decoder_of(k) == d ||
				    (k == A_EXT && d == D_EXT_SAMPLE);
			struct outcome full, o;
			decode(&f, d, ans[k], MAD_SIZE, SW_PORT, &full);
			ck_assert_int_eq(full.rc, meant ? 0 : -1);
			for (size_t len = 0; len <= MAD_SIZE; len++) {
				decode(&f, d, ans[k], len, SW_PORT, &o);
				if (!bad[0] && o.rc != (meant && len >= need[d] ? 0 : -1))
					snprintf(bad, sizeof(bad), "%s, answer %d, %zu bytes: %d",
						 decoder_name[d], k, len, o.rc);
				if (!bad[0] && !o.rc && memcmp(&o, &full, sizeof(o)))
					snprintf(bad, sizeof(bad), "%s, answer %d, %zu bytes: "
						 "not what the whole answer gives",
						 decoder_name[d], k, len);
			}
		}
	}
	fence_close(&f);
	ck_assert_msg(!bad[0], "%s", bad);
}
END_TEST

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define FUZZ_RANDOM 150000	/* random inputs, each to every decoder */
#define FUZZ_FLIPS 40000	/* bit-flipped copies of each valid answer */

/*
 * Random bytes (a third with a valid PerfMgt GetResp header, so that
 * they reach the attribute's fields) and valid answers with 1-8 bits
 * flipped, cut at a random length a quarter of the time: every decoder
 * returns 0 or -1 with a reason, and reads nothing past the length.
 * A flip outside the bytes a decoder checks or reads changes nothing.
 */
START_TEST(random_and_flipped)
{
	uint8_t ans[N_ANSWERS][MAD_SIZE], in[MAD_SIZE];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	static const uint16_t attrs[] = { 0x0001, 0x0012, 0x001D };
	struct fence f;
	struct outcome o;
	unsigned long calls = 0, accepted = 0;
	valid_answers(ans);
	fence_open(&f);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < FUZZ_RANDOM; i++) {
		for (size_t b = 0; b < MAD_SIZE; b += 8) {
			uint64_t r = rng_next(&x);
			memcpy(in + b, &r, 8);
		}
		size_t len = rng_next(&x) % (MAD_SIZE + 1);
		if (i % 3 == 0) {
			in[1] = PMA_CLASS;
			in[2] = PMA_CLASS_VERSION;
			in[3] = 0x81;
			in[4] = in[5] = 0;
			uint16_t at = attrs[rng_next(&x) % 3];
			in[16] = (uint8_t)(at >> 8);
			in[17] = (uint8_t)at;
		}
		uint8_t port = (uint8_t)(i % 2 ? in[65] : rng_next(&x));
		for (int d = 0; d < N_DECODERS; d++) {
			decode(&f, d, in, len, port, &o);
			calls++;
			accepted += !o.rc;
		}
	}
	for (int k = 0; k < N_ANSWERS; k++) {
		for (int i = 0; i < FUZZ_FLIPS; i++) {
			memcpy(in, ans[k], MAD_SIZE);
			int flips = 1 + (int)(rng_next(&x) % 8);
			for (int j = 0; j < flips; j++) {
				unsigned bit = (unsigned)(rng_next(&x) % (MAD_SIZE * 8));
				in[bit / 8] ^= (uint8_t)(1u << bit % 8);
			}
			size_t len = i % 4 ? MAD_SIZE : rng_next(&x) % (MAD_SIZE + 1);
			for (int d = 0; d < N_DECODERS; d++) {
				decode(&f, d, in, len, SW_PORT, &o);
				calls++;
				accepted += !o.rc;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fence_close(&f);
	ck_assert_msg(!bad[0], "%s", bad);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("test_pma: %lu decoder calls, %lu accepted, %.0f ms\n", calls, accepted, ms);
	/* both outcomes were reached: the inputs are neither all junk nor all valid */
	ck_assert_uint_gt(accepted, calls / 50);
	ck_assert_uint_lt(accepted, calls / 2);
}
END_TEST

/* The requests: what the emulator's offsets and the spec expect. */
START_TEST(requests)
{
	uint8_t m[MAD_SIZE];
	struct mad_addr to;
	pma_cpi_get(m, 9, &to);
	ck_assert_uint_eq(m[1], PMA_CLASS);
	ck_assert_uint_eq(m[2], 1);
	ck_assert_uint_eq(m[3], 0x01);
	ck_assert_uint_eq(m[16] << 8 | m[17], PMA_ATTR_CLASS_PORT_INFO);
	ck_assert_uint_eq(to.lid, 9);
	ck_assert_uint_eq(to.qpn, 1);
	ck_assert_uint_eq(to.qkey, PMA_QP1_QKEY);
	pma_pc_get(m, 5, 9, &to);
	ck_assert_uint_eq(m[3], 0x01);
	ck_assert_uint_eq(m[16] << 8 | m[17], PMA_ATTR_PORT_COUNTERS);
	ck_assert_uint_eq(m[64 + 1], 5);
	ck_assert_uint_eq(m[64 + 2] | m[64 + 3] | m[64 + 18], 0);
	pma_pc_clear(m, 5, PMA_PC_SELECT_ALL, 9, &to);
	ck_assert_uint_eq(m[3], 0x02);
	ck_assert_uint_eq(m[64 + 1], 5);
	ck_assert_uint_eq(m[64 + 2] << 8 | m[64 + 3], 0xFFFF);
	ck_assert_uint_eq(m[64 + 18], PMA_PC_SELECT2_XMIT_WAIT);
	ck_assert_uint_eq(to.qpn, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pma");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, requests);
	tcase_add_test(tc, known_answers);
	tcase_add_test(tc, capmask_and_select);
	tcase_add_test(tc, truncations);
	tcase_add_test(tc, random_and_flipped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

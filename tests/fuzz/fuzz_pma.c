/*
 * libFuzzer target for the PerfMgt decoders (mad/pma.c): `make fuzz`
 * (clang's -fsanitize=fuzzer with ASan and UBSan; not part of make check,
 * where tests/unit/test_pma.c runs a fixed, seeded share of the same).
 *
 * An input is two control bytes and a pattern: byte 0 picks the decoder
 * (bits 0-1) and the answer the pattern is XORed onto (bits 2-3: zeros,
 * or a valid ClassPortInfo, PortCounters or PortCountersExtended answer,
 * written here from the specification's offsets), byte 1 the port asked
 * for (0: the answer's own); the pattern's length is the answer's.  So
 * the fuzzer reaches the fields past the header checks without a corpus.
 * The answer is copied right before an inaccessible page: a read past its
 * length faults even inside libibmad, which ASan does not see into.
 * Every refusal must carry a reason.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mad/pma.h"

#define PORT 3

static uint8_t *fence_end;	/* the first inaccessible byte */

static void fence_init(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + page, (size_t)page, PROT_NONE))
		abort();
	fence_end = p + page;
}

/* A valid answer of attribute attr (0: all zeros) into m. */
static void base_answer(uint8_t *m, uint16_t attr)
{
	memset(m, 0, MAD_SIZE);
	if (!attr)
		return;
	m[0] = 1;
	m[1] = PMA_CLASS;
	m[2] = PMA_CLASS_VERSION;
	m[3] = 0x81;
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	uint8_t *d = m + PMA_DATA_OFFS;
	if (attr == PMA_ATTR_CLASS_PORT_INFO) {
		d[0] = d[1] = 1;
		d[3] = (uint8_t)(PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT);
		d[2] = (uint8_t)((PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT) >> 8);
		return;
	}
	d[1] = PORT;
	for (int i = 4; i < 44; i++)	/* every counter something */
		d[i] = (uint8_t)(i * 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t attrs[4] = {
		0, PMA_ATTR_CLASS_PORT_INFO, PMA_ATTR_PORT_COUNTERS,
		PMA_ATTR_PORT_COUNTERS_EXT
	};
	uint8_t m[MAD_SIZE];
	char err[160], err2[160];
	if (size < 2)
		return 0;
	if (!fence_end)
		fence_init();
	size_t len = size - 2 > MAD_SIZE ? MAD_SIZE : size - 2;
	base_answer(m, attrs[data[0] >> 2 & 3]);
	for (size_t i = 0; i < len; i++)
		m[i] ^= data[2 + i];
	uint8_t port = data[1] ? data[1] : PORT;
	uint8_t *in = fence_end - len;
	memcpy(in, m, len);

	struct pma_cpi cpi;
	struct pma_sample s = { 0 };
	struct pma_counters_ext ext;
	int rc;
	err[0] = 0;
	switch (data[0] & 3) {
	case 0:
		rc = pma_cpi_decode(in, len, &cpi, err, sizeof(err));
		break;
	case 1:
		rc = pma_pc_decode(in, len, port, &s, err, sizeof(err));
		break;
	case 2:
		rc = pma_ext_decode(in, len, port, &ext, err, sizeof(err));
		break;
	default:
		rc = pma_ext_decode_sample(in, len, port, &s, err, sizeof(err));
		/* the two extended decoders agree */
		if ((pma_ext_decode(in, len, port, &ext, err2, sizeof(err2)) != rc) ||
		    (!rc && (s.v[PMC_XMIT_DATA] != ext.xmit_data ||
			     s.v[PMC_RCV_PKTS] != ext.rcv_pkts)))
			abort();
	}
	if (rc != 0 && rc != -1)
		abort();
	if (rc && (!err[0] || !memchr(err, 0, sizeof(err))))
		abort();	/* a refusal without a reason */
	return 0;
}

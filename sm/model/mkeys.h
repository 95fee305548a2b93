/*
 * The M_Keys the SM gives ports (IBA vol. 1 14.2.4, Management Key), from
 * one secret: a port's M_Key is a keyed hash of its port GUID, so it is
 * never stored per port, two SMs with the same secret give every port the
 * same key, and a key seen on the wire tells nothing of another port's.
 *
 * The hash is libsodium's crypto_shorthash (SipHash-2-4): a 128-bit key
 * (the secret), a 64-bit output, exactly the M_Key's size, built as a
 * pseudo-random function (SipHash is a PRF), from a library the project
 * already links for the SM_Key proof (sm/smkey.c).
 *
 * The secret is a file: 32 hex digits (16 bytes) and a newline, mode 0600
 * (no group or other bits), made at first start from randombytes_buf() and
 * written atomically (sm/base/wfile.h) like the state directory's other
 * files.  ibsmd.yaml(5), security.m_key.secret_file.
 *
 * Pure but for the secret file: no loop, no daemon.
 */
#ifndef IBSMD_MKEYS_H
#define IBSMD_MKEYS_H

#include <stddef.h>
#include <stdint.h>

#define MKEYS_SECRET_LEN	16	/* crypto_shorthash_KEYBYTES */
#define MKEYS_SECRET_FILE	"mkey.secret"	/* in the state directory */

/* What the SM gives ports: security.m_key with its secret read. */
struct mkeys {
	int protect;		/* M_KeyProtectBits; 0: no M_Key written */
	/*
	 * The secret is read: SMPs carry the derived keys.  With protect 0
	 * too when the file is there (lowering the level on a keyed fabric:
	 * the ports still hold their keys until the Set that writes 0).
	 */
	int have_secret;
	uint16_t lease_s;	/* M_KeyLeasePeriod */
	uint8_t secret[MKEYS_SECRET_LEN];
};

/*
 * Port port_guid's M_Key under secret: SipHash-2-4 of the GUID's 8 bytes,
 * big-endian (as on the wire), read as a big-endian 64-bit number; 0 (no
 * protection at all, 14.2.4.1) is given as 1.
 */
uint64_t mkeys_derive(const uint8_t secret[MKEYS_SECRET_LEN], uint64_t port_guid);
/* The M_Key an SMP to port_guid carries: 0 without a secret or the port unknown. */
uint64_t mkeys_port_key(const struct mkeys *k, uint64_t port_guid);

/*
 * Reads the secret from path.  An absent file is made when create != 0
 * (16 random bytes, mode 0600, atomically; returns 1) and left alone
 * when create is 0 (-n: the start would make it; returns 2, secret
 * untouched).  Refused (-1, err naming path and the fix): a file group or
 * other may read or write, one that is not exactly 32 hex digits (and at
 * most one newline), one that cannot be read or made.  0: read.
 */
#define MKEYS_READ	0
#define MKEYS_MADE	1
#define MKEYS_ABSENT	2
int mkeys_secret_load(const char *path, int create,
		      uint8_t secret[MKEYS_SECRET_LEN], char *err, size_t errlen);

/* security.m_key.secret_file, or STATE_DIR/mkey.secret: into buf. */
struct config;
const char *mkeys_secret_path(const struct config *c, char *buf, size_t len);

#endif

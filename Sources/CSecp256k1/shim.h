// libsecp256k1 as the system provides it (Debian's libsecp256k1-dev): the core API and the
// recoverable-signature module that Lightning message signatures need, and the x-only keys and
// BIP-340 signatures of Nostr.
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

// libsecp256k1 as the system provides it (Debian's libsecp256k1-dev): the core API and the
// recoverable-signature module that Lightning message signatures need.
#include <secp256k1.h>
#include <secp256k1_recovery.h>

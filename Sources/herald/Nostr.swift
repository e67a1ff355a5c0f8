import ArgumentParser
import Foundation
import HeraldNostr
import HeraldWire

/// `herald nostr`: the key zap receipts are signed with.
struct Nostr: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nostr",
        abstract: "Zaps (NIP-57): make the Nostr key receipts are signed with.",
        subcommands: [Keygen.self]
    )

    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new Nostr secret key (hex, owner-only) and print its public key.",
            discussion: """
                Point nostr.secret_key_file (HERALD_NOSTR_SECRET_KEY_FILE) at the file to turn zaps on.
                The public key printed is the nostrPubkey every Lightning address advertises; payers'
                clients check zap receipts against it, so keep the key.
                """
        )

        @OptionGroup var file: KeyFileOptions

        func run() throws {
            let (key, hex) = NostrSecretKey.generate()
            try file.write(
                hex + "\n", publicKey: key.publicKeyHex, named: "nostrPubkey", replacing: "receipts would then be signed by another key")
        }
    }
}

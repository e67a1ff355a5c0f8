import ArgumentParser

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: push notifications that wake Lightning and crypto wallets.",
        version: Herald.version,
        subcommands: [Serve.self, Send.self, Keys.self, WebPush.self, Nostr.self, DeadLetters.self, Config.self]
    )

    /// Bare boolean flags read as command lines usually do (``BareBooleanFlags``).
    static func main() async {
        await main(BareBooleanFlags.expanded(Array(CommandLine.arguments.dropFirst())))
    }

    /// `herald --version`; raised with each release.
    static let version = "0.22.0"
}

/// The true-or-false flags of `herald serve` take a value (`--flag true`, `--flag=false`) or
/// stand alone: `--flag` is `--flag true` and `--no-flag` is `--flag false`.
enum BareBooleanFlags {
    static let names: Set<String> = [
        "--accept-raw-tokens", "--webpush-allow-insecure-endpoints", "--webpush-allow-private-endpoints",
        "--nostr-allow-private-relays", "--local-provider",
    ]
    static let values: Set<String> = ["true", "false", "1", "0", "yes", "no", "on", "off"]

    static func expanded(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument.hasPrefix("--no-"), names.contains("--" + argument.dropFirst(5)) {
                out += ["--" + argument.dropFirst(5), "false"]
            } else if names.contains(argument), index >= arguments.count || !values.contains(arguments[index].lowercased()) {
                out += [argument, "true"]
            } else {
                out.append(argument)
            }
        }
        return out
    }
}

/// Nostr Wallet Connect's event kinds (NIP-47).
public enum NwcKind {
    /// An app's request to the wallet service.
    public static let request = 23194
    /// The wallet service's answer.
    public static let response = 23195
    /// The wallet service's info event: the methods it answers and the encryptions it speaks.
    public static let info = 13194
}

/// The NIP-01 filters a watcher of NWC requests subscribes with.
public enum NwcFilter {
    /// Requests (``NwcKind/request``) addressed (`#p`) to any of `walletServiceKeys`, created at
    /// `since` or later: `{"kinds":[23194],"#p":["<key>",…],"since":<since>}`. Written by hand, not
    /// through an encoder: one filter names hundreds of keys, and the keys are x-only keys in
    /// lower-case hex (as registration checks them), which need no escaping.
    public static func requests(to walletServiceKeys: some Sequence<String>, since: Int64) -> String {
        let keys = walletServiceKeys.map { #"""# + $0 + #"""# }.joined(separator: ",")
        return ##"{"kinds":[\##(NwcKind.request)],"#p":[\##(keys)],"since":\##(since)}"##
    }
}

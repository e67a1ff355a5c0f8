/// Nostr Wallet Connect's event kinds (NIP-47).
public enum NwcKind {
    /// An app's request to the wallet service.
    public static let request = 23194
    /// The wallet service's answer.
    public static let response = 23195
    /// The wallet service's info event: the methods it answers and the encryptions it speaks.
    public static let info = 13194
}

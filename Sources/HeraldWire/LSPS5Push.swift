/// The data keys an LSPS5 notification adds to its wake pushes, beside ``WakePushKey``'s: what
/// the LSP sent, so the wallet can check the signature again and tell which LSP woke it.
public enum LSPS5PushKey {
    /// The JSON-RPC `method`, e.g. `lsps5.payment_incoming`.
    public static let method = "lsps5_method"
    /// The `params` object, as compact JSON text.
    public static let params = "lsps5_params"
    /// The request body exactly as the LSP sent it: the signed bytes, for a second check.
    public static let body = "lsps5_body"
    /// `x-lsps5-timestamp`, as sent.
    public static let timestamp = "lsps5_timestamp"
    /// `x-lsps5-signature`, as sent.
    public static let signature = "lsps5_signature"
    /// The node id the signature recovers to (66 hex digits).
    public static let nodeID = "lsps5_node_id"
    /// `"true"` when that node id is the one the device registered, `"false"` when the device
    /// registered none and Herald could only check that the signature is well formed.
    public static let verified = "lsps5_verified"
}

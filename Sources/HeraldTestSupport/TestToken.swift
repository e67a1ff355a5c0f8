/// Push tokens of the right form for tests that name their devices: Herald checks a token's form
/// for its platform at every entrance, whatever the provider.
public enum TestToken {
    /// An APNs-form token (even-length hex) spelling `name`: its UTF-8 bytes in hex. A token
    /// already of that form is returned as it is.
    public static func apns(_ name: String) -> String {
        let isHex = !name.isEmpty && name.utf8.count.isMultiple(of: 2) && name.allSatisfy(\.isHexDigit)
        return isHex ? name : name.utf8.map { String(format: "%02x", $0) }.joined()
    }
}

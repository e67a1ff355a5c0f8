import AsyncHTTPClient
import Foundation
import HeraldWire
import NIOCore

/// The few calls phones and LSPs make, as JSON over one shared `HTTPClient`.
struct FleetHTTP: Sendable {
    let client: HTTPClient
    let baseURL: String

    struct Answer: Sendable {
        var status: Int
        var body: Data
        func decode<T: Decodable>(_ type: T.Type) -> T? { try? WireJSON.decode(type, from: body) }
    }

    func call(_ method: String, _ path: String, bearer: String? = nil, json: Data? = nil) async -> Answer? {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .init(rawValue: method)
        if let bearer { request.headers.add(name: "authorization", value: "Bearer \(bearer)") }
        if let json {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json))
        }
        do {
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 64 * 1024)
            return Answer(status: Int(response.status.code), body: Data(body.readableBytesView))
        } catch {
            return nil
        }
    }

}

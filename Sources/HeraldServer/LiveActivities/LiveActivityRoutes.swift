import Foundation
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// `PUT` and `DELETE /api/v1/devices/{id}/live-activities/{swap_id}`: the token iOS gave a swap's
/// started activity (`Activity.pushTokenUpdates`), so its updates and its end can reach it; and
/// forgetting it. Authenticated with the device secret, like the other device routes.
struct LiveActivityRoutes: Sendable {
    let devices: any DeviceStore
    let activities: any LiveActivityStore
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.put("devices/:id/live-activities/:swap_id") { request, context in try await put(request, context: context) }
        router.delete("devices/:id/live-activities/:swap_id") { request, context in try await delete(request, context: context) }
    }

    func put(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (device, swapID) = try await target(request, context: context)
        var request = request
        let body = try await Edge.readJSONBody(LiveActivityTokenBody.self, from: &request)
        let token = try Edge.checkPushToken(body.pushToken, platform: .ios)
        try await activities.setLiveActivityToken(deviceID: device.id, swapID: swapID, token: token, now: now())
        return Response(status: .noContent)
    }

    func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (device, swapID) = try await target(request, context: context)
        guard try await activities.deleteLiveActivity(deviceID: device.id, swapID: swapID) else {
            throw APIError(.unknownLiveActivity, "this device has no Live Activity for this swap")
        }
        return Response(status: .noContent)
    }

    private func target(_ request: Request, context: HeraldRequestContext) async throws -> (Device, String) {
        let device = try await DeviceRoutes.authenticate(request, context: context, in: devices)
        guard device.platform == .ios else {
            throw APIError(.invalidRequest, "Live Activities are iOS's: this device is \(device.platform.rawValue)")
        }
        let swapID = context.parameters.get("swap_id") ?? ""
        guard SwapActivities.isValidSwapID(swapID) else {
            throw APIError(.invalidRequest, "swap_id must be 1 to 128 printable ASCII characters")
        }
        return (device, swapID)
    }
}

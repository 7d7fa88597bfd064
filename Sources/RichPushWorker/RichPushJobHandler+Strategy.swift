import Crypto
import RichPushCore
import RichPushQueue
import RichPushStorage

extension RichPushJobHandler {
    /// Chooses the form of each `auto` push from its device's estimate (one call to the ledger
    /// for the round): silent while the budget allows and the device answers, else the alert
    /// with a media URL of its own. A device with several pushes in the round is estimated
    /// push by push, as if each before it went out. An alert that cannot be rendered fails
    /// that device's push alone.
    func choose(_ toSend: [PlannedPush], into round: inout DeliveryRound) async throws -> [PlannedPush] {
        let auto = toSend.indices.filter { toSend[$0].auto != nil }
        guard !auto.isEmpty else { return toSend }
        var estimates = try await ledger.deliveryEstimates(of: Array(Set(auto.map { toSend[$0].key.installation })))
        let mediaKey = try await mediaSigner?.key()
        let now = JobQueue.nowMilliseconds()
        var chosen = toSend
        var failed = Set<Int>()
        for index in auto {
            guard let (notification, format) = toSend[index].auto else { continue }
            let installation = toSend[index].key.installation
            let choice = autoDelivery.choose(estimates[installation], format: format, now: now)
            chosen[index].strategy = choice.reason
            switch choice.form {
            case .alert:
                do throws(RenderError) {
                    chosen[index].push.rendered = try alertForm(of: notification, format: format, for: installation, key: mediaKey)
                } catch {
                    round.record(chosen[index].result(.failed, error: error.message), of: chosen[index])
                    failed.insert(index)
                }
            case .silent, .auto:
                guard format != .webpush else { continue }
                let spent = autoDelivery.spent(estimates[installation], notification: notification.id, at: now)
                estimates[installation] = spent
                chosen[index].spent = spent
            }
        }
        return chosen.indices.filter { !failed.contains($0) }.map { chosen[$0] }
    }

    /// `notification`'s alert form in `format` for `installation`, carrying the signed media URL
    /// of that device, valid an hour past the push's own deadline (the API's fetch path without
    /// a `key`: a handler made without a signer).
    func alertForm(
        of notification: RichNotification, format: PushFormat, for installation: String, key: SymmetricKey?
    ) throws(RenderError) -> RenderedPush {
        let url = key.map {
            MediaURLSigner.url(
                key: $0, base: renderer.apiBaseURL, app: app, id: notification.id, installation: installation,
                expires: renderer.deadline(of: notification, now: .now) / 1000 + 3600)
        }
        return try renderer.render(notification, format: format, collapseID: String(notification.id), form: .alert, richURL: url)
    }
}

import Crypto
import Foundation
package import RichPushCore
package import RichPushNH
import RichPushReport

/// Notification Hubs' bulk registration file, what its export jobs write and its import jobs
/// read: one registration description per line (`<AppleRegistrationDescription …>…</…>`; an Atom
/// entry holding one is taken too). `richpush apps nh-export` and `nh-import` move a hub's
/// registrations with it (docs/nh.md, "Moving a hub").
package enum NHRegistrationFile {
    /// The longest line read: one registration document.
    package static let maxLineBytes = NHXML.maxBytes

    /// The installation a line describes, under its `RegistrationId` (a new NH-style id when it
    /// has none), owned by the hub; why not, in words.
    package static func installation(line: String, updatedAt: Int64) throws(NHError) -> Installation {
        guard line.utf8.count <= maxLineBytes else {
            throw NHError.badRequest("the line is \(line.utf8.count) bytes; a registration takes at most \(maxLineBytes)")
        }
        let root: NHXMLElement
        do {
            root = try NHXML.parse(Array(line.utf8))
        } catch {
            throw NHError.badRequest("not XML RichPush reads: \(error.message)")
        }
        let isEntry = root.name == "entry"
        guard let description = isEntry ? root.child("content")?.children.first : root else {
            throw NHError.badRequest("an Atom entry whose content is a registration description")
        }
        let given = description.child("RegistrationId")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let id = given.isEmpty ? NHRegistrationRoutes.newRegistrationID() : given
        guard NHInstallationID.isValid(id) else { throw NHError.badRequest("RegistrationId: \(NHInstallationID.rule)") }
        do {
            return try NHRegistrationDescription.installation(description: description, id: id, updatedAt: updatedAt)
        } catch let error as NHError {
            throw error
        } catch let error as APIError {
            throw NHError.badRequest(error.message)
        } catch {
            throw NHError.badRequest("\(error)")
        }
    }

    /// `installation`'s lines: one registration, or, for an installation with several templates,
    /// one template registration per template (as NH keeps an installation's templates), the first
    /// under the installation's id and each other under an id made from it and the template's name
    /// (the same on every export). None for a platform NH's registrations do not have.
    package static func lines(_ installation: Installation) -> [String] {
        guard let kind = NHRegistrationDescription.kind(of: installation) else { return [] }
        guard installation.templates.count > 1 else {
            return [NHRegistrationDescription.description(installation, kind: kind, template: installation.templates.first)]
        }
        return installation.templates.enumerated().map { index, template in
            let digest = SHA256.hash(data: Array("\(installation.id)\n\(template.name)".utf8))
            let id = index == 0 ? installation.id : String(installation.id.prefix(55)) + "-" + Hex.encode(digest).prefix(8)
            return NHRegistrationDescription.description(installation, kind: kind, template: template, id: id)
        }
    }
}

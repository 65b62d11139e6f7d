import Foundation
import Logging
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

extension AppRunner {
    /// Carries out one effect of the core; answers what it learned, for the core to handle next.
    func execute(_ effect: AppCore.Effect, _ core: AppCore, _ running: inout Running) async -> Input? {
        switch effect {
        case .perform(let command):
            let outcome = await perform(command, filter: core.ui.filter)
            return .performed(command, outcome, route: env.routing.route)
        case .performInBackground(let command):
            let sink = running.sink
            running.background = Task {
                let outcome = await self.perform(command)
                sink.yield(.performed(command, outcome, route: self.env.routing.route))
            }
        case .cancelBackground:
            running.background?.cancel()
            running.background = nil
        case .startSync:
            let env = env
            let sink = running.sink
            // Below the keys' priority: a pass is CPU work the person does not wait on (D62).
            running.syncing = Task(priority: SyncPriority.pass) {
                let run = await env.sync.sync(full: false)
                await env.syncFinished(run)
                sink.yield(.synced(run))
            }
        case .retrySync(let delay):
            running.retry?.cancel()
            running.retry = Self.syncDue(after: delay, running.sink)
        case .syncSoon:
            running.debounce?.cancel()
            running.debounce = Self.syncDue(after: writeDebounce, running.sink)
        case .markLocalChanges(let ours):
            // Another terminal's sign-out (or sign-in) is this app's too, within half a second
            // (it went unnoticed until the next pass).
            env.auth.adoptStoredSession()
            await env.sync.refreshCounts()
            guard let mark = try? await env.store.localChangeMark() else { return nil }
            return .marked(mark, ours: ours)
        case .resolve(let link, let reply):
            return .resolved(link, await resolve(link), reply)
        case .announce(let link):
            env.routing.send(.deepLink(link.description))
        case .move(let request, let reply):
            let env = env
            let previous = running.moves
            let sink = running.sink
            running.moves = Task {
                await previous?.value
                let answer = await Self.move(env, request)
                reply.send(answer.line)
                sink.yield(.message(answer.description))
            }
        case .answer(let answer, let reply):
            reply.send(answer.line)
        case .read:
            return .read(await viewData(route: core.route, ui: core.ui, sink: running.sink))
        case .paint(let index, let route, let screen, let banner, let text):
            terminal.draw(
                Frame(
                    index: index, route: route.description, screen: screen, banner: banner,
                    elapsedMs: LaunchClock.milliseconds(since: start), text: text),
                plain: plain)
        case .repaint:
            terminal.invalidate()
        case .suspend:
            await enterBackground(reason: "SIGTSTP")
            terminal.leave()
            // Suspend for real: the default action, raised at ourselves; `fg` continues here.
            running.signals.suspend()
            terminal.enter()
            // The hooks' pass used to run inside the loop: after `fg` keys waited for it (the
            // whole network budget with a hung server).
            let previous = running.foreground
            let sink = running.sink
            running.foreground = Task(priority: SyncPriority.pass) {
                await previous?.value
                await self.enterForeground()
                // What the pass brought is shown now, as after the launch's hooks.
                sink.yield(.refresh)
            }
        case .log(let message, let metadata):
            log.info("\(message)", metadata: metadata.mapValues { .string($0) })
        case .exit:
            break
        }
        return nil
    }

    /// A pass due after `delay`, unless cancelled meanwhile.
    static func syncDue(after delay: Duration, _ sink: AsyncStream<Input>.Continuation) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { sink.yield(.syncDue) }
        }
    }

    func enterBackground(reason: String) async {
        log.info("Scene phase", metadata: ["phase": "background", "reason": .string(reason)])
        for module in env.modules.reversed() { await module.didEnterBackground() }
        env.logs.flush()
    }

    func enterForeground() async {
        log.info("Scene phase", metadata: ["phase": "foreground"])
        for module in env.modules { await module.willEnterForeground() }
    }

    /// Does what a key asked: the line to show, and whether it wrote locally.
    func perform(_ command: AppUI.Command, filter: UUIDv7? = nil) async -> AppCore.Outcome {
        do {
            switch command {
            case .quit, .redraw, .syncNow: return AppCore.Outcome()
            case .log, .logAt, .delete, .retype, .editNote, .retime, .setValues, .undo:
                return try await performEvent(command)
            case .jump, .createType, .renameType, .deleteType, .createPlace, .editPlace, .deletePlace, .restoreConflict,
                .dismissConflict, .retryFailed, .signOut, .switchAccount, .changePassword:
                return try await performManage(command, filter: filter)
            case .signIn(let email, let password), .signUp(let email, let password):
                // Asked the way the CLI asks: a server that does not answer costs the respond
                // budget (2 s), not the request's.
                let answer = await env.reachability.check()
                guard case .reachable = answer else {
                    return AppCore.Outcome(
                        message: "Not signed in: \(answer.explanation ?? "the server did not answer").", failed: true)
                }
                try Task.checkCancellation()
                if case .signUp = command { try await refuseNewAccountOverUnsentData(env, email: email) }
                let session: AuthSession
                do throws(AuthError) {
                    if case .signUp = command {
                        session = try await env.auth.signUp(email: email, password: password)
                    } else {
                        session = try await env.auth.signIn(email: email, password: password)
                    }
                } catch {
                    return AppCore.Outcome(message: error.description, failed: true)
                }
                let carried = try await claimLocalData(env, for: session)
                return AppCore.Outcome(
                    message: ["Signed in as \(session.user.email).", carried].compactMap { $0 }.joined(separator: " "))
            case .onboardingNext, .onboardingBack, .onboardingSkip, .firstType, .firstEvent, .permissions:
                try await onboarding(command)
                return AppCore.Outcome(wrote: command != .onboardingBack)
            }
        } catch let error as CLIError {
            return AppCore.Outcome(message: error.message, failed: true)
        } catch LocalStoreError.invalid(let error) {
            return AppCore.Outcome(message: AppHelp.refusal(error), failed: true)
        } catch let error as LocalStoreError {
            return AppCore.Outcome(message: error.description, failed: true)
        } catch let error as ValidationError {
            return AppCore.Outcome(message: AppHelp.refusal(error), failed: true)
        } catch {
            return AppCore.Outcome(message: String(describing: error), failed: true)
        }
    }

    /// Runs one onboarding step and tells routing where the person now stands.
    func onboarding(_ command: AppUI.Command) async throws {
        let steps = try env.onboardingSteps()
        let position: OnboardingPosition
        let none = CLIPermissionPrompter(answers: [:], interactive: false)
        switch command {
        case .onboardingBack: position = try await steps.backStep()
        case .onboardingSkip: position = try await steps.skipStep()
        case .firstType(let name): position = try await steps.nextStep(typeName: name, logType: nil, prompter: none)
        case .firstEvent(let type): position = try await steps.nextStep(typeName: nil, logType: type, prompter: none)
        case .permissions(let allow):
            let answer: PermissionAnswer = allow ? .allow : .skip
            let person = CLIPermissionPrompter(
                answers: Dictionary(uniqueKeysWithValues: PermissionKind.allCases.map { ($0, answer) }),
                interactive: false)
            position = try await steps.nextStep(typeName: nil, logType: nil, prompter: env.permissionPrompter(person))
        default: position = try await steps.nextStep(typeName: nil, logType: nil, prompter: none)
        }
        switch position {
        case .completed: env.routing.send(.onboardingCompleted)
        case .step(_, let step), .signedOut(let step): env.routing.send(.onboardingStepChanged(step))
        }
    }
}

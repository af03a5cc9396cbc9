import { writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Effect } from "effect"
import type { PullRequestLocation } from "../src/index.ts"
import { hostEnvironment, localApi, lookupAll, type Reply, type Seen, scratch, statesOf } from "./hostingApi.ts"

const secret = "prboxTestSecretAccessKey000000000000001"

const at = (n: number, profile = "dev"): PullRequestLocation => ({
  provider: "codecommit",
  host: "eu-west-1",
  repository: "MyDemoRepo",
  pullRequest: PullRequestNumber.make(n),
  profile
})

/** GetPullRequest's answer, shaped as the API reference's response syntax. */
const pullRequest = (id: number, status: string, merged: boolean, repositoryName = "MyDemoRepo") => ({
  pullRequest: {
    approvalRules: [],
    authorArn: "arn:aws:iam::111111111111:user/Li_Juan",
    clientRequestToken: "123Example",
    creationDate: 1508962823.285,
    description: "A code review of the new feature I just added to the service.",
    lastActivityDate: 1508962823.285,
    pullRequestId: String(id),
    pullRequestStatus: status,
    pullRequestTargets: [
      {
        destinationCommit: "5d036259EXAMPLE",
        destinationReference: "refs/heads/main",
        mergeBase: "a5ba4f3dEXAMPLE",
        mergeMetadata: {
          isMerged: merged,
          ...(merged ? { mergedBy: "arn:aws:iam::111111111111:user/Mary_Major" } : {})
        },
        repositoryName,
        sourceCommit: "317f8570a45bcf2e0a0e3e6f4c3b94c3e4a2b1c0",
        sourceReference: "refs/heads/jane-branch"
      }
    ],
    revisionId: "9f29d167EXAMPLE",
    title: "Pronunciation difficulty analyzer"
  }
})

const failure = (type: string, message: string): Reply => ({
  status: 400,
  headers: { "content-type": "application/x-amz-json-1.1", "x-amzn-errortype": type },
  json: { __type: type, message }
})

/** Answers as CodeCommit's JSON protocol does, when the request is signed with the profile's key. */
const codeCommit = (seen: Seen): Reply => {
  const signed = /Credential=AKIAPRBOXTESTKEY0001\/\d{8}\/eu-west-1\/codecommit\/aws4_request/.test(
    String(seen.headers.authorization)
  )
  if (!signed) return failure("UnrecognizedClientException", "The security token included in the request is invalid.")
  if (seen.headers["x-amz-target"] !== "CodeCommit_20150413.GetPullRequest")
    return failure("UnknownOperationException", "")
  const id = (JSON.parse(seen.body) as { pullRequestId: string }).pullRequestId
  const answers: Record<string, unknown> = {
    "42": pullRequest(42, "OPEN", false),
    "43": pullRequest(43, "CLOSED", true),
    "44": pullRequest(44, "CLOSED", false),
    "45": pullRequest(45, "OPEN", false, "OtherRepo")
  }
  if (id === "429") return failure("ThrottlingException", "Rate exceeded")
  const found = answers[id]
  return found === undefined
    ? failure("PullRequestDoesNotExistException", `The pull request ID ${id} does not exist.`)
    : { status: 200, headers: { "content-type": "application/x-amz-json-1.1" }, json: found }
}

/** A shared credentials file with the `dev` profile (and `stale`, a key the service refuses), and no other source of AWS credentials. */
const awsProfile = Effect.gen(function* () {
  const dir = yield* scratch
  writeFileSync(
    NodePath.join(dir, "credentials"),
    `[dev]\naws_access_key_id = AKIAPRBOXTESTKEY0001\naws_secret_access_key = ${secret}\n` +
      `[stale]\naws_access_key_id = AKIAOTHERKEY0000002\naws_secret_access_key = ${secret}\n`
  )
  writeFileSync(NodePath.join(dir, "config"), "")
  for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"])
    delete process.env[name]
  process.env.AWS_SHARED_CREDENTIALS_FILE = NodePath.join(dir, "credentials")
  process.env.AWS_CONFIG_FILE = NodePath.join(dir, "config")
  process.env.AWS_EC2_METADATA_DISABLED = "true"
})

/** The local CodeCommit API, with the AWS profiles as its only credentials. */
const codeCommitApi = Effect.gen(function* () {
  yield* hostEnvironment({})
  yield* awsProfile
  return yield* localApi(codeCommit)
})

describe("NodePullRequests: CodeCommit through the AWS SDK", () => {
  it.live("open, merged and closed pull requests, signed with the profile's key (fake CodeCommit API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const api = yield* codeCommitApi
        const answers = yield* lookupAll({ codeCommitEndpoint: api.base }, [at(42), at(43), at(44)])
        assert.deepStrictEqual(answers[0], {
          _tag: "Known",
          info: {
            title: "Pronunciation difficulty analyzer",
            author: "Li_Juan",
            state: "open",
            sourceBranch: "jane-branch",
            sourceCloneUrl: null,
            baseRef: "main",
            headSha: "317f8570a45bcf2e0a0e3e6f4c3b94c3e4a2b1c0"
          }
        })
        assert.deepStrictEqual(statesOf(answers), ["open", "merged", "closed"])
      })
    )
  )

  it.live(
    "another repository's id and a missing id are Missing; throttling is rate limited (fake CodeCommit API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const api = yield* codeCommitApi
          const answers = yield* lookupAll({ codeCommitEndpoint: api.base }, [at(45), at(46), at(429)])
          assert.deepStrictEqual(answers, [
            { _tag: "Missing", detail: "pull request #45 is not one of MyDemoRepo's" },
            {
              _tag: "Missing",
              detail: "eu-west-1 has no pull request #46 in MyDemoRepo (The pull request ID 46 does not exist.)"
            },
            { _tag: "Unknown", reason: "eu-west-1 rate limited the lookup (429); retry later" }
          ])
        })
      )
  )

  it.live(
    "no credentials for the profile, or a key the service refuses: Unknown naming what to configure (fake CodeCommit API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const api = yield* codeCommitApi
          const [none] = yield* lookupAll({ codeCommitEndpoint: api.base }, [at(42, "nobody")])
          assert.deepStrictEqual(none, {
            _tag: "Unknown",
            reason: "no credentials for eu-west-1",
            configure:
              "configure AWS credentials for profile nobody (`aws configure --profile nobody` or `aws sso login --profile nobody`)"
          })
          const [refused] = yield* lookupAll({ codeCommitEndpoint: api.base }, [at(42, "stale")])
          assert.deepStrictEqual(refused, {
            _tag: "Unknown",
            reason: "eu-west-1 refused the credentials (401)",
            configure:
              "configure AWS credentials for profile stale (`aws configure --profile stale` or `aws sso login --profile stale`)"
          })
          for (const answer of [none, refused]) assert.notInclude(JSON.stringify(answer), secret)
        })
      )
  )
})

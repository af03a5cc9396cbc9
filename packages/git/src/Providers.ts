import type { Provider } from "@prbox/domain"

// The hosts prbox knows: how each names a repository, its remote, its pull
// request refs and pages.

/** The refusal of an input, with a reason safe to show. */
export interface Refused {
  readonly reason: string
}

/** Where an input points, before the options settle its number and head ref. */
export interface Target {
  readonly provider: Provider
  readonly host: string
  readonly repository: string
  readonly remoteUrl: string
  readonly number?: number
  /** The provider's head ref; absent when its git server publishes none. */
  readonly headRef?: (n: number) => string
  readonly webUrl?: (n: number) => string
  readonly profile?: string
}

/** The pull request head refs of the hosts that publish them. */
export const providerHeadRefs = {
  github: (n: number) => `refs/pull/${n}/head`,
  gitlab: (n: number) => `refs/merge-requests/${n}/head`,
  bitbucketServer: (n: number) => `refs/pull-requests/${n}/from`
} as const

export const githubAt = (scheme: string, host: string, owner: string, repo: string): Target => ({
  provider: "github",
  host,
  repository: `${owner}/${repo}`,
  remoteUrl: `${scheme}://${host}/${owner}/${repo}.git`,
  headRef: providerHeadRefs.github,
  webUrl: (n) => `${scheme}://${host}/${owner}/${repo}/pull/${n}`
})

export const gitlab = (scheme: string, host: string, repository: string): Target => ({
  provider: "gitlab",
  host,
  repository,
  remoteUrl: `${scheme}://${host}/${repository}.git`,
  headRef: providerHeadRefs.gitlab,
  webUrl: (n) => `${scheme}://${host}/${repository}/-/merge_requests/${n}`
})

// Bitbucket Cloud's git server publishes branches only: no pull request refs.
export const bitbucketCloud = (workspace: string, repo: string): Target => ({
  provider: "bitbucket",
  host: "bitbucket.org",
  repository: `${workspace}/${repo}`,
  remoteUrl: `https://bitbucket.org/${workspace}/${repo}.git`,
  webUrl: (n) => `https://bitbucket.org/${workspace}/${repo}/pull-requests/${n}`
})

export const bitbucketServer = (scheme: string, host: string, project: string, repo: string): Target => ({
  provider: "bitbucket",
  host,
  repository: `${project}/${repo}`,
  remoteUrl: `${scheme}://${host}/scm/${project.toLowerCase()}/${repo}.git`,
  headRef: providerHeadRefs.bitbucketServer,
  webUrl: (n) => `${scheme}://${host}/projects/${project}/repos/${repo}/pull-requests/${n}`
})

// CodeCommit's git server publishes branches only: the source branch is fetched.
export const codeCommit = (region: string, repo: string, profile: string | undefined): Target => ({
  provider: "codecommit",
  host: region,
  repository: repo,
  remoteUrl: `codecommit::${region}://${profile === undefined ? "" : `${profile}@`}${repo}`,
  webUrl: (n) =>
    `https://${region}.console.aws.amazon.com/codesuite/codecommit/repositories/${repo}/pull-requests/${n}/details?region=${region}`,
  ...(profile === undefined ? {} : { profile })
})

export const isRegion = (region: string): boolean => /^[a-z]{2}(?:-[a-z]+)+-\d+$/.test(region)

export const isProfile = (profile: string): boolean => /^[A-Za-z0-9_.+=,][A-Za-z0-9_.+=,-]*$/.test(profile)

// Runs octokit's graphql() against forgeapi (FORGEAPI_URL: its REST base,
// .../api/v3, from which octokit derives .../api/graphql; FORGEAPI_TOKEN)
// and prints what it got as one JSON object: the viewer, the repository
// OWNER/REPO asked with variables, and the viewer's repositories paged
// PAGE_SIZE at a time by @octokit/plugin-paginate-graphql.
import { graphql } from "@octokit/graphql";
import { Octokit } from "@octokit/rest";
import { paginateGraphQL } from "@octokit/plugin-paginate-graphql";

const baseUrl = process.env.FORGEAPI_URL;
const token = process.env.FORGEAPI_TOKEN;
const summary = {};

try {
  const gql = graphql.defaults({ baseUrl, headers: { authorization: `token ${token}` } });
  const { viewer } = await gql(`{ viewer { login databaseId } }`);
  summary.viewer = viewer;

  const { repository } = await gql(
    `query repo($owner: String!, $name: String!) {
      repository(owner: $owner, name: $name) { nameWithOwner description isPrivate url }
    }`,
    { owner: process.env.OWNER, name: process.env.REPO },
  );
  summary.repository = repository;

  const PaginatingOctokit = Octokit.plugin(paginateGraphQL);
  const octokit = new PaginatingOctokit({ baseUrl, auth: token });
  const query = `query paginate($cursor: String, $size: Int!) {
    viewer {
      repositories(first: $size, after: $cursor, ownerAffiliations: OWNER, orderBy: {field: NAME, direction: ASC}) {
        totalCount
        nodes { name }
        pageInfo { hasNextPage endCursor }
      }
    }
  }`;
  const size = Number(process.env.PAGE_SIZE);
  summary.pages = 0;
  for await (const page of octokit.graphql.paginate.iterator(query, { size })) {
    summary.pages++;
    summary.pageSizes = [...(summary.pageSizes ?? []), page.viewer.repositories.nodes.length];
  }
  const all = await octokit.graphql.paginate(query, { size });
  summary.totalCount = all.viewer.repositories.totalCount;
  summary.names = all.viewer.repositories.nodes.map((n) => n.name);
} catch (err) {
  summary.error = String(err);
}
console.log(JSON.stringify(summary));

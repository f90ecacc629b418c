//! The store suite against `PostgresStore`, on the server `DATABASE_URL` names
//! (`scripts/postgres.sh` starts one). Without it the tests fail, unless
//! `TOOLWRIGHT_SKIP_SERVICES=postgres` skips them by name.

mod support;

use std::sync::Arc;
use support::{Sql, Target, database_url};
use toolwright_store::PostgresStore;

async fn target() -> Option<Target> {
    let url = database_url()?;
    let store = PostgresStore::connect(&url).await.unwrap();
    let sql: Sql = Arc::new(move |statement: String| {
        let url = url.clone();
        Box::pin(async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let connection = tokio::spawn(connection);
            assert_eq!(
                client.execute(&statement, &[]).await.unwrap(),
                1,
                "{statement}"
            );
            drop(client);
            let _ = connection.await;
        })
    });
    Some(Target {
        store: Arc::new(store),
        sql,
    })
}

store_suite!(target());

#[tokio::test]
async fn connecting_again_migrates_nothing_more() {
    let Some(url) = database_url() else { return };
    drop(PostgresStore::connect(&url).await.unwrap());
    drop(PostgresStore::connect(&url).await.unwrap());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one("SELECT COUNT(*) FROM agent_store_migrations", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
}

#[tokio::test]
async fn a_bad_url_is_an_error() {
    let error = PostgresStore::connect("postgres://nobody@127.0.0.1:1/none")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("connecting to Postgres"),
        "{error}"
    );
}

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from accounts import views as account_views
from accounts.forms import LoginForm
from config.apidocs import RedocDocs, SwaggerDocs
from leaderboard import analysis_views, cost_views, data_views, pairs_apis, snapshot_apis
from leaderboard import apis as board_apis
from leaderboard import submission_views as submission_pages
from leaderboard import views as board_views
from leaderboard.not_found import page_not_found
from submissions import apis as submission_apis
from submissions import check_apis, team_views, upload_apis
from submissions import views as submission_views
from submissions.client_wheel import client_index, client_wheel

#: The site's 404 page (config.notfound shows it with DEBUG on too): a board's address names the boards.
handler404 = page_not_found

urlpatterns = [
    path("", board_views.home, name="home"),
    path("favicon.ico", board_views.favicon, name="favicon"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/", board_views.board, name="board"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/export.<str:fmt>", board_views.board_export, name="board-export"),
    path("models/<int:model_id>/", board_views.model_detail, name="model-detail"),
    path("environments/<slug:env>/", board_views.metric_card_view, name="metric-card"),
    path("environments/<slug:env>/prompts/<slug:flow>/<str:version>/", board_views.prompt_set_view, name="prompt-set"),
    path("submit/", submission_views.submit, name="submit"),
    path("submit/upload/", submission_views.upload, name="upload"),
    path("submit/upload/checks/<int:check_id>/", submission_views.upload_check_page, name="upload-check"),
    path("submit/checks/<int:check_id>/", submission_views.endpoint_check_page, name="endpoint-check"),
    path("queue/", submission_views.queue, name="queue"),
    path("submissions/<int:submission_id>/", submission_pages.submission_detail, name="submission-detail"),
    path("submissions/<int:submission_id>/<str:action>/", submission_views.submission_action, name="submission-action"),
    path("attempts/<int:attempt_id>/replay/", submission_views.attempt_replay, name="attempt-replay"),
    path("attempts/<int:attempt_id>/frames/<str:name>", submission_views.attempt_frame, name="attempt-frame"),
    path("attempts/<int:attempt_id>/trace.zip", submission_views.attempt_trace, name="attempt-trace"),
    path("api/v1/boards/<slug:env>/<slug:flow>/<slug:subset>/", board_apis.BoardApi.as_view(), name="api-board"),
    path("api/v1/boards/<slug:env>/<slug:flow>/<slug:subset>/attempts.<str:fmt>",
         board_apis.BoardAttemptsExportApi.as_view(), name="api-board-attempts-export"),
    path("api/v1/submissions/<int:submission_id>/attempts.<str:fmt>",
         board_apis.SubmissionExportApi.as_view(), name="api-submission-export"),
    path("api/v1/submissions/", submission_apis.SubmissionListCreateApi.as_view(), name="api-submission-create"),
    path("api/v1/submissions/<int:submission_id>/<str:action>/", submission_apis.SubmissionActionApi.as_view(),
         name="api-submission-action"),
    path("api/v1/me/", submission_apis.MeApi.as_view(), name="api-me"),
    path("api/v1/queue/", submission_apis.QueueApi.as_view(), name="api-queue"),
    path("api/v1/models/", submission_apis.ModelListCreateApi.as_view(), name="api-models"),
    path("api/v1/uploads/", upload_apis.UploadCreateApi.as_view(), name="api-upload"),
    path("api/v1/uploads/check/", upload_apis.UploadCheckApi.as_view(), name="api-upload-check"),
    path("api/v1/uploads/checks/<int:check_id>/", upload_apis.UploadCheckDetailApi.as_view(),
         name="api-upload-check-detail"),
    path("api/v1/endpoint-checks/", check_apis.EndpointCheckCreateApi.as_view(), name="api-endpoint-check-create"),
    path("api/v1/endpoint-checks/<int:check_id>/", check_apis.EndpointCheckDetailApi.as_view(),
         name="api-endpoint-check"),
    path("api/v1/submissions/<int:submission_id>/", submission_apis.SubmissionDetailApi.as_view(),
         name="api-submission-detail"),
    path("api/v1/attempts/<int:attempt_id>/trajectory/", submission_apis.AttemptTrajectoryApi.as_view(),
         name="api-attempt-trajectory"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/analysis/", analysis_views.board_analysis, name="board-analysis"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/compare/", analysis_views.board_compare, name="board-compare"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/pairs/", analysis_views.board_pairs, name="board-pairs"),
    path("api/v1/boards/<slug:env>/<slug:flow>/<slug:subset>/pairs/", pairs_apis.BoardPairsApi.as_view(),
         name="api-board-pairs"),
    path("boards/<slug:env>/<slug:flow>/<slug:subset>/cost/", cost_views.board_cost, name="board-cost"),
    path("cost/", cost_views.cost_overview, name="cost-overview"),
    path("data/columns/", data_views.data_columns, name="data-columns"),
    path("data/snapshots/", data_views.snapshot_index, name="data-snapshots"),
    path("data/snapshots/<slug:env>/<slug:flow>/<slug:subset>/<slug:suite>/<str:version>/", data_views.snapshot_detail,
         name="data-snapshot"),
    path("data/snapshots/<slug:env>/<slug:flow>/<slug:subset>/<slug:suite>/<str:version>/<path:name>",
         data_views.snapshot_file, name="data-snapshot-file"),
    path("api/v1/snapshots/", snapshot_apis.SnapshotListApi.as_view(), name="api-snapshots"),
    path("api/v1/snapshots/<slug:env>/<slug:flow>/<slug:subset>/<slug:suite>/<str:version>/",
         snapshot_apis.SnapshotDetailApi.as_view(), name="api-snapshot"),
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/password/", account_views.PasswordChange.as_view(), name="password_change"),
    path("accounts/password/reset/", account_views.PasswordReset.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("accounts/password/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("accounts/password/reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/login/link/<str:secret>/", account_views.login_proof, name="login-proof"),
    path("accounts/signup/", account_views.signup, name="signup"),
    path("accounts/email/", account_views.account_email, name="account-email"),
    path("accounts/", account_views.account, name="account"),
    path("teams/<slug:slug>/", team_views.team, name="team"),
    path("teams/<slug:slug>/<str:action>/", account_views.team_action, name="team-action"),
    path("client/", client_index, name="client-index"),
    path("client/<str:name>", client_wheel, name="client-wheel"),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SwaggerDocs.as_view(), name="api-docs"),
    path("api/redoc/", RedocDocs.as_view(), name="api-redoc"),
    path("admin/", admin.site.urls),
]

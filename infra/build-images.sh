#!/usr/bin/env bash
# Builds the cloud image and every self-hosted image under the vendor API contract's names with one
# date-like tag (YYYY.MM.DD, or TAG=...), and pushes them when PUSH=1:
#   {registry}/lector:<tag>                 the cloud stack's one image (infra/k8s/cloud, compose)
#   {registry}/api/service:<tag>            the API service
#   {registry}/engine/arcana:<tag>          the model service engine (code and engines, no weights)
#   {registry}/package/arcana/<lang>:<tag>  one language's voices and their weights (ar de en es fr hi)
#   {registry}/arcana/v2/<lang>:<tag>       engine and package in one image
#   {registry}/mist/v2/en:<tag>             mist, English
# Usage: REGISTRY=registry.example.com/lector infra/build-images.sh   (make images)
set -euo pipefail
cd "$(dirname "$0")/.."

REGISTRY=${REGISTRY:-lector}
TAG=${TAG:-$(date -u +%Y.%m.%d)}
LANGUAGES=(ar de en es fr hi)
DOCKER=${DOCKER:-docker}
[[ "$TAG" =~ ^[0-9]{4}\.[0-9]{2}\.[0-9]{2}(\.[0-9]+)?$ ]] || { echo "TAG must be date-like (YYYY.MM.DD[.N]): $TAG" >&2; exit 2; }

built=()
build() { local image=$1; shift; "$DOCKER" build -t "$image" "$@" .; built+=("$image"); }

build "$REGISTRY/lector:$TAG" -f infra/docker/Dockerfile
build "$REGISTRY/api/service:$TAG" -f infra/docker/Dockerfile
build "$REGISTRY/engine/arcana:$TAG" -f infra/docker/Dockerfile --build-arg WEIGHTS=package
build "$REGISTRY/mist/v2/en:$TAG" -f infra/docker/Dockerfile
for lang in "${LANGUAGES[@]}"; do
    build "$REGISTRY/package/arcana/$lang:$TAG" -f infra/docker/Dockerfile.package --build-arg "LANGUAGE=$lang"
    build "$REGISTRY/arcana/v2/$lang:$TAG" -f infra/docker/Dockerfile.arcana \
        --build-arg "ENGINE=$REGISTRY/engine/arcana:$TAG" --build-arg "PACKAGE=$REGISTRY/package/arcana/$lang:$TAG"
done
if [[ "${PUSH:-0}" == 1 ]]; then
    for image in "${built[@]}"; do "$DOCKER" push "$image"; done
fi
printf '%s\n' "${built[@]}"
